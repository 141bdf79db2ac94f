/**
 * Loopback stand-ins for the public sites that public Playwright example specs
 * visit, so those specs run here unchanged but for their base URL:
 *
 * - playwright.dev (create-playwright's `example.spec.ts`/`.js`): a home page
 *   whose title contains "Playwright", with a "Get started" link to a docs
 *   page whose heading is "Installation";
 * - the Danube WebShop (checkly's onboarding `homepage.spec.ts` and its
 *   example projects' specs): a home page titled "Danube WebShop" with a
 *   small catalogue to browse, search and put in a cart.
 *
 * Each takes a `broken` option that makes some of those specs' tests fail the
 * way a broken site would, so that a comparison of outcomes covers failures.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface PublicSite {
  /** The stand-in's base URL, with a trailing slash: `http://127.0.0.1:<port>/`. */
  url: string;
  /** Paths requested so far, in order. */
  requests: string[];
  close(): Promise<void>;
}

/**
 * How the playwright.dev stand-in breaks: `title` (the home page's title lacks
 * "Playwright": "has title" fails), `heading` (the docs page has no
 * "Installation" heading: "get started link" fails).
 */
export type PlaywrightDevBreak = 'title' | 'heading';
/** How the webshop stand-in breaks: `title` (another shop's title), `status` (the home page answers 500). */
export type WebShopBreak = 'title' | 'status';

type Route = { status?: number; html: string };

const page = (title: string, body: string): string =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>${title}</title></head><body>${body}</body></html>`;

export function startPlaywrightDev(options: { broken?: PlaywrightDevBreak } = {}): Promise<PublicSite> {
  const title = options.broken === 'title' ? 'Fast and reliable end-to-end testing for modern web apps' : 'Fast and reliable end-to-end testing for modern web apps | Playwright';
  const heading = options.broken === 'heading' ? 'Getting ready' : 'Installation';
  return startSite({
    '/': {
      html: page(
        title,
        `<header><nav><a href="/">Playwright</a> <a href="/docs/intro">Docs</a> <a href="/docs/api/class-playwright">API</a></nav></header>
         <main><h1>Playwright enables reliable end-to-end testing for modern web apps.</h1>
         <a class="button" href="/docs/intro">Get started</a> <a href="/community/welcome">Community</a></main>`,
      ),
    },
    '/docs/intro': {
      html: page(
        `${heading} | Playwright`,
        `<nav><a href="/">Playwright</a></nav><main><article><h1>${heading}</h1>
         <h2>Introduction</h2><p>Playwright Test was created specifically to accommodate the needs of end-to-end testing.</p>
         <h2>Installing Playwright</h2><pre>npm init playwright@latest</pre></article></main>`,
      ),
    },
  });
}

/**
 * The shop's books: enough of the Danube WebShop's catalogue for checkly's
 * example specs (browse a category, search an author, put a book in the cart).
 */
const BOOKS = [
  { title: 'Haben oder haben', author: 'Herman Moulson', genre: 'Crime' },
  { title: 'Parry Hotter', author: 'J/K Rowlin', genre: 'Fantasy' },
  { title: 'The Pickled Lynx', author: 'Ester Nomad', genre: 'Fantasy' },
  { title: 'The Sitting', author: 'Stephen Queen', genre: 'Horror' },
  { title: 'The Nightmare Cellar', author: 'Ann Wretched', genre: 'Horror' },
  { title: 'Laughterhouse-Five', author: 'Truk Tugennov', genre: 'Sci-Fi' },
  { title: 'The Foreigner', author: 'Louis Camu', genre: 'Romance' },
];

/**
 * The shop as one page: a header with the search box, its "Search" button and
 * "Log in" (a dialog with Email and Password); the categories as links; the
 * home view with its "SPECIAL OFFER: 20% OFF BOOKS" banner and every book;
 * a category's books; search results as one types (or on "Search"); a book's
 * page with "Add to cart"; the cart ("Your Shopping Cart", one list item a
 * book, the total, "Checkout"). Each book is a `.preview`, as on the real shop.
 */
const SHOP_SCRIPT = `
const BOOKS = ${JSON.stringify(BOOKS)};
const main = document.querySelector('main');
const search = document.querySelector('header input');
const cart = [];
const h = (tag, text, props = {}) => Object.assign(document.createElement(tag), { textContent: text ?? '' }, props);
function previews(books) {
  return books.map((book) => {
    const card = h('div', null, { className: 'preview' });
    card.append(h('div', book.title, { className: 'preview-title' }), h('div', book.author, { className: 'preview-author' }), h('div', '9.95 €'));
    card.addEventListener('click', () => showBook(book));
    return card;
  });
}
function showHome() {
  main.replaceChildren(h('h2', 'SPECIAL OFFER: 20% OFF BOOKS'), ...previews(BOOKS));
}
function showGenre(genre) {
  main.replaceChildren(h('h2', genre), ...previews(BOOKS.filter((book) => book.genre === genre)));
}
function showResults() {
  const query = search.value.trim().toLowerCase();
  const found = BOOKS.filter((book) => book.title.toLowerCase().includes(query) || book.author.toLowerCase().includes(query));
  main.replaceChildren(h('h2', 'Search results'), ...(found.length ? previews(found) : [h('p', 'No books found')]));
}
function showBook(book) {
  const add = h('button', 'Add to cart');
  add.addEventListener('click', () => { cart.push(book); showCart(); });
  main.replaceChildren(h('h2', book.title), h('p', 'by ' + book.author), h('p', '9.95 €'), add);
}
function showCart() {
  const list = h('ul');
  list.append(...cart.map((book) => h('li', book.title + ' – 9.95 €')));
  main.replaceChildren(h('h2', 'Your Shopping Cart'), list, h('p', 'Total: ' + (cart.length * 9.95).toFixed(2) + ' €'), h('button', 'Checkout'));
}
function showLogin() {
  const dialog = h('form', null, { className: 'login' });
  dialog.append(h('input', null, { type: 'email', placeholder: 'Email' }), h('input', null, { type: 'password', placeholder: 'Password' }), h('button', 'Sign in', { type: 'submit' }));
  dialog.addEventListener('submit', (event) => { event.preventDefault(); dialog.remove(); });
  document.body.append(dialog);
}
search.addEventListener('input', showResults);
document.getElementById('search').addEventListener('click', showResults);
document.getElementById('login').addEventListener('click', showLogin);
for (const link of document.querySelectorAll('nav a')) link.addEventListener('click', (event) => { event.preventDefault(); showGenre(link.textContent); });
showHome();
`;

export function startWebShop(options: { broken?: WebShopBreak } = {}): Promise<PublicSite> {
  const title = options.broken === 'title' ? 'Tiber Books' : 'Danube WebShop';
  const genres = [...new Set(BOOKS.map((book) => book.genre))];
  return startSite({
    '/': {
      status: options.broken === 'status' ? 500 : 200,
      html: page(
        title,
        `<header><h1>${title}</h1><input aria-label="Search" placeholder="Search"> <button id="search">Search</button> <button id="login">Log in</button></header>
         <nav>${genres.map((genre) => `<a href="#${genre}">${genre}</a>`).join(' ')}</nav>
         <main></main>
         <script>${SHOP_SCRIPT}</script>`,
      ),
    },
  });
}

async function startSite(routes: Record<string, Route>): Promise<PublicSite> {
  const requests: string[] = [];
  const server: Server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://stand-in').pathname;
    requests.push(path);
    const route = routes[path];
    if (!route) {
      response.writeHead(404, { 'content-type': 'text/html; charset=utf-8' }).end(page('Page Not Found', '<h1>Page Not Found</h1>'));
      return;
    }
    response.writeHead(route.status ?? 200, { 'content-type': 'text/html; charset=utf-8' }).end(route.html);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
