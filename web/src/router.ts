import { useEffect, useState } from 'preact/hooks';

/** Where the page is: `#/checks/<id>?tag=…`, split. Hash routes: the service serves one page at `/`. */
export interface Route {
  parts: string[];
  query: URLSearchParams;
}

export function parseHash(hash: string): Route {
  const raw = hash.replace(/^#/, '');
  const [path = '', search = ''] = raw.split('?', 2);
  return { parts: path.split('/').filter(Boolean).map(decodeURIComponent), query: new URLSearchParams(search) };
}

export function href(parts: string[], query?: Record<string, string | undefined>): string {
  const path = `#/${parts.map(encodeURIComponent).join('/')}`;
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) if (value) search.set(name, value);
  return search.size > 0 ? `${path}?${search.toString()}` : path;
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseHash(location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseHash(location.hash));
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return route;
}

/** Changes the query of the current route without adding a history entry (filters). */
export function replaceQuery(route: Route, changes: Record<string, string | undefined>): void {
  const query: Record<string, string | undefined> = Object.fromEntries(route.query.entries());
  Object.assign(query, changes);
  history.replaceState(null, '', href(route.parts, query));
  window.dispatchEvent(new HashChangeEvent('hashchange'));
}
