/** Who may call a route: anyone, a tenant key (or the admin key), or only the admin. */
export type Access = 'public' | 'tenant' | 'admin';

/** The browser login form for the admin session, and its logout. */
export const LOGIN_PATH = '/admin/login';
export const LOGOUT_PATH = '/admin/logout';

/** The dashboard's stylesheet and scripts: the login page uses the stylesheet before anyone signs in. */
const DASHBOARD_STATIC = '/admin/static/:name';

/** The playground's page and files: its API calls carry the key a person pastes into it. */
const PLAYGROUND = ['/playground', '/playground/playground.js', '/playground/playground.css'];

const PUBLIC_ROUTES = new Set(['/', '/healthz', '/readyz', '/ok', '/openapi.json', '/docs', LOGIN_PATH, LOGOUT_PATH, DASHBOARD_STATIC, ...PLAYGROUND]);

const isAdminRoute = (path: string) => path === '/metrics' || path === '/admin' || path.startsWith('/admin/');

/**
 * The access rule of a request: by its matched route pattern (`request.routeOptions.url`), or by
 * its path when no route matched. Deny by default: a route nobody listed, and an unmatched URL,
 * need a key (the admin key under /admin and at /metrics).
 */
export function accessOf(route: string | undefined, path: string): Access {
  if (route === undefined) return isAdminRoute(path) ? 'admin' : 'tenant';
  if (PUBLIC_ROUTES.has(route) || route.startsWith('/docs/')) return 'public';
  return isAdminRoute(route) ? 'admin' : 'tenant';
}
