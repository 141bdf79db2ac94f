export const name = '0018-destination-policies';

/**
 * Deliveries stop keeping what a receiver answered: an account chooses its
 * webhook URLs, so a stored status or error text made the delivery list a
 * probe of internal services. Reasons the service gave itself are kept.
 * Private locations get the address ranges their checks may not reach
 * (denied) and the exceptions to those (allowed); empty: anything.
 */
export const sql = `
ALTER TABLE alert_deliveries DROP COLUMN last_status;
UPDATE alert_deliveries SET last_error = 'the receiver did not accept it'
  WHERE last_error IS NOT NULL
    AND last_error NOT IN ('the alert channel was deleted', 'no SMS provider is configured (SMS_WEBHOOK_URL)');
ALTER TABLE private_locations
  ADD COLUMN allowed_destinations text[] NOT NULL DEFAULT '{}',
  ADD COLUMN denied_destinations text[] NOT NULL DEFAULT '{}';
`;
