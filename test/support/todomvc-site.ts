/**
 * A loopback stand-in for demo.playwright.dev/todomvc, the React TodoMVC that
 * Playwright's own examples (examples/todomvc) and create-playwright's former
 * `demo-todo-app.spec` drive: one vanilla-JS page at `/todomvc` with the
 * markup, accessible names, test ids and behaviour those specs rely on.
 *
 * - "What needs to be done?" input; Enter adds the trimmed text, ignores blanks;
 * - items `li[data-testid=todo-item]` (class "" or "completed", "editing"
 *   while edited) with a "Toggle Todo" checkbox, a `todo-title` label and a
 *   "Delete" button shown on hover;
 * - double-click edits in an "Edit" textbox: Enter or blur saves the trimmed
 *   text (empty deletes), Escape cancels;
 * - "❯Mark all as complete" (the arrow is CSS content, as on the real page),
 *   the `todo-count` "N item(s) left", filters All/Active/Completed on the
 *   hash (#/, #/active, #/completed) with the chosen one `selected`, and
 *   "Clear completed" while something is completed;
 * - no list at all while there are no items (the real app renders its main
 *   section and footer only then);
 * - the items kept in localStorage under "react-todos" as
 *   [{ id, title, completed }], read back on load.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface TodoMvcSite {
  /** The base URL, with a trailing slash; the app is at `${url}todomvc`. */
  url: string;
  /** The app's own URL, standing in for https://demo.playwright.dev/todomvc. */
  appUrl: string;
  /** Paths requested so far, in order. */
  requests: string[];
  close(): Promise<void>;
}

const STYLE = `
body { font: 14px 'Helvetica Neue', Helvetica, Arial, sans-serif; background: #f5f5f5; margin: 0; }
.todoapp { background: #fff; margin: 130px auto 40px; width: 550px; position: relative; }
.todoapp h1 { position: absolute; top: -110px; width: 100%; font-size: 80px; font-weight: 200; text-align: center; color: #b83f45; margin: 0; }
.new-todo, .edit { width: 100%; box-sizing: border-box; font-size: 24px; padding: 16px 16px 16px 60px; border: none; }
.main { position: relative; border-top: 1px solid #e6e6e6; }
.toggle-all-row { padding: 4px 12px; }
.toggle-all + label::before { content: '❯'; color: #949494; padding-right: 4px; }
.todo-list { margin: 0; padding: 0; list-style: none; }
.todo-list li { position: relative; font-size: 24px; border-bottom: 1px solid #ededed; }
.todo-list li .view { display: flex; align-items: center; padding: 0 40px 0 12px; }
.todo-list li .toggle { width: 30px; height: 30px; margin: 0 12px 0 0; }
.todo-list li label { flex: 1; padding: 15px 0; word-break: break-all; }
.todo-list li.completed label { color: #949494; text-decoration: line-through; }
.todo-list li .destroy { display: none; position: absolute; right: 10px; top: 10px; width: 40px; height: 40px; border: none; background: none; font-size: 30px; color: #949494; }
.todo-list li .destroy::after { content: '×'; }
.todo-list li:hover .destroy { display: block; }
.todo-list li.editing .view { display: none; }
.footer[hidden], .main[hidden], .clear-completed[hidden] { display: none; }
.footer { display: flex; justify-content: space-between; align-items: center; padding: 10px 15px; border-top: 1px solid #e6e6e6; }
.filters { display: flex; margin: 0; padding: 0; list-style: none; }
.filters li a { margin: 3px; padding: 3px 7px; border: 1px solid transparent; color: inherit; text-decoration: none; }
.filters li a.selected { border-color: #ce4646; }
.clear-completed { border: none; background: none; cursor: pointer; }
.info { margin: 65px auto 0; color: #4d4d4d; font-size: 11px; text-align: center; }
`;

// Elements are kept and updated in place, as React does: Playwright's check() reads the state of the very checkbox it clicked.
const SCRIPT = `
const KEY = 'react-todos';
let todos = [];
try { todos = JSON.parse(localStorage.getItem(KEY) || '[]'); } catch { todos = []; }
let editing = null;
const input = document.querySelector('.new-todo');
const main = document.querySelector('.main');
const footer = document.querySelector('.footer');
const list = document.querySelector('.todo-list');
const toggleAll = document.getElementById('toggle-all');
const count = document.querySelector('.todo-count');
const clear = document.querySelector('.clear-completed');
const links = [...document.querySelectorAll('.filters a')];
const items = new Map();
const save = () => localStorage.setItem(KEY, JSON.stringify(todos));
const filter = () => (location.hash === '#/active' ? 'active' : location.hash === '#/completed' ? 'completed' : 'all');
const uuid = () => (crypto.randomUUID ? crypto.randomUUID() : String(Date.now()) + Math.random());

function update(next) {
  todos = next;
  save();
  render();
}
const change = (id, patch) => update(todos.map((t) => (t.id === id ? { ...t, ...patch } : t)));

function finishEdit(id, text) {
  if (editing !== id) return;
  editing = null;
  const title = text.trim();
  if (title) change(id, { title });
  else update(todos.filter((t) => t.id !== id));
}

function startEdit(id) {
  editing = id;
  render();
  const li = items.get(id);
  const edit = document.createElement('input');
  edit.className = 'edit';
  edit.setAttribute('aria-label', 'Edit');
  edit.value = todos.find((t) => t.id === id).title;
  edit.addEventListener('blur', () => finishEdit(id, edit.value));
  edit.addEventListener('keydown', (event) => {
    if (event.key === 'Enter') finishEdit(id, edit.value);
    if (event.key === 'Escape') { editing = null; render(); }
  });
  li.append(edit);
  edit.focus();
}

function itemOf(todo) {
  let li = items.get(todo.id);
  if (li) return li;
  li = document.createElement('li');
  li.dataset.testid = 'todo-item';
  li.innerHTML = '<div class="view"><input class="toggle" type="checkbox" aria-label="Toggle Todo"><label data-testid="todo-title"></label><button class="destroy" aria-label="Delete"></button></div>';
  li.querySelector('.toggle').addEventListener('change', (event) => change(todo.id, { completed: event.target.checked }));
  li.querySelector('label').addEventListener('dblclick', () => startEdit(todo.id));
  li.querySelector('.destroy').addEventListener('click', () => update(todos.filter((t) => t.id !== todo.id)));
  items.set(todo.id, li);
  return li;
}

function render() {
  const shown = todos.filter((t) => (filter() === 'active' ? !t.completed : filter() === 'completed' ? t.completed : true));
  const wanted = shown.map(itemOf);
  for (const [id, li] of items) {
    if (!wanted.includes(li)) { li.remove(); if (!todos.some((t) => t.id === id)) items.delete(id); }
  }
  wanted.forEach((li, index) => { if (list.children[index] !== li) list.insertBefore(li, list.children[index] ?? null); });
  for (const todo of shown) {
    const li = items.get(todo.id);
    li.className = (todo.completed ? 'completed' : '') + (editing === todo.id ? (todo.completed ? ' editing' : 'editing') : '');
    li.querySelector('.toggle').checked = todo.completed;
    li.querySelector('label').textContent = todo.title;
    if (editing !== todo.id) li.querySelector('.edit')?.remove();
  }
  const left = todos.filter((t) => !t.completed).length;
  main.hidden = footer.hidden = todos.length === 0;
  toggleAll.checked = todos.length > 0 && left === 0;
  count.replaceChildren(Object.assign(document.createElement('strong'), { textContent: String(left) }), left === 1 ? ' item left' : ' items left');
  for (const link of links) link.className = link.dataset.filter === filter() ? 'selected' : '';
  clear.hidden = todos.length === left;
}

input.addEventListener('keydown', (event) => {
  if (event.key !== 'Enter') return;
  const title = input.value.trim();
  if (!title) return;
  input.value = '';
  update([...todos, { id: uuid(), title, completed: false }]);
});
toggleAll.addEventListener('change', () => update(todos.map((t) => ({ ...t, completed: toggleAll.checked }))));
clear.addEventListener('click', () => update(todos.filter((t) => !t.completed)));
window.addEventListener('hashchange', render);
render();
`;

const PAGE = `<!doctype html>
<html lang="en" data-framework="react">
<head><meta charset="utf-8"><link rel="icon" href="data:,"><title>React • TodoMVC</title><style>${STYLE}</style></head>
<body>
<section class="todoapp">
  <header class="header"><h1>todos</h1><input class="new-todo" placeholder="What needs to be done?" autofocus></header>
  <section class="main" hidden>
    <div class="toggle-all-row"><input id="toggle-all" class="toggle-all" type="checkbox"><label for="toggle-all">Mark all as complete</label></div>
    <ul class="todo-list"></ul>
  </section>
  <footer class="footer" hidden>
    <span class="todo-count" data-testid="todo-count"></span>
    <ul class="filters">
      <li><a href="#/" data-filter="all">All</a></li>
      <li><a href="#/active" data-filter="active">Active</a></li>
      <li><a href="#/completed" data-filter="completed">Completed</a></li>
    </ul>
    <button class="clear-completed" hidden>Clear completed</button>
  </footer>
</section>
<footer class="info"><p>Double-click to edit a todo</p><p>Part of TodoMVC</p></footer>
<script>${SCRIPT}</script>
</body>
</html>`;

export async function startTodoMvc(): Promise<TodoMvcSite> {
  const requests: string[] = [];
  const server: Server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://stand-in').pathname;
    requests.push(path);
    if (path === '/todomvc' || path === '/todomvc/' || path === '/todomvc/index.html') {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(PAGE);
      return;
    }
    response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not Found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return {
    url,
    appUrl: `${url}todomvc`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
