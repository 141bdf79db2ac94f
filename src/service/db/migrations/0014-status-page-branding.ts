export const name = '0014-status-page-branding';

/**
 * A status page's branding: a logo (and where it links), a favicon, the
 * theme it opens in and the colours of its light and dark themes. URLs are
 * checked to be https before they are stored; colours are #rrggbb.
 */
export const sql = `
ALTER TABLE status_pages ADD COLUMN logo text;
ALTER TABLE status_pages ADD COLUMN redirect_to text;
ALTER TABLE status_pages ADD COLUMN favicon text;
ALTER TABLE status_pages ADD COLUMN default_theme text NOT NULL DEFAULT 'AUTO';
ALTER TABLE status_pages ADD COLUMN theme_colors jsonb NOT NULL DEFAULT '{}';
`;
