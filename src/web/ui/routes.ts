import { lazyPage } from './lazy-page.tsx';

/** The signed-in pages, by their path under /ui (wouter's patterns); the first that matches renders. */
export const PAGE_ROUTES = [
  { path: '/', page: lazyPage(() => import('./pages/experiments-page.tsx'), 'ExperimentsPage') },
  {
    path: '/experiments/new',
    page: lazyPage(() => import('./pages/new-experiment-page.tsx'), 'NewExperimentPage'),
  },
  { path: '/experiments/:id', page: lazyPage(() => import('./pages/experiment-page.tsx'), 'ExperimentPage') },
  // The graph layout library is most of this page's weight; only those who open it load it.
  {
    path: '/experiments/:id/lineage',
    page: lazyPage(() => import('./pages/lineage-page.tsx'), 'LineagePage'),
  },
  {
    path: '/experiments/:id/variations/:n/runs/:r',
    page: lazyPage(() => import('./pages/run-page.tsx'), 'RunPage'),
  },
  {
    path: '/experiments/:id/sweeps/:sweepId',
    page: lazyPage(() => import('./pages/sweep-page.tsx'), 'SweepPage'),
  },
  {
    path: '/experiments/:id/compare',
    page: lazyPage(() => import('./pages/compare-page.tsx'), 'ComparePage'),
  },
  { path: '/assets', page: lazyPage(() => import('./pages/assets-page.tsx'), 'AssetsPage') },
  { path: '/search', page: lazyPage(() => import('./pages/search-page.tsx'), 'SearchPage') },
  { path: '/api-keys', page: lazyPage(() => import('./pages/api-keys-page.tsx'), 'ApiKeysPage') },
  {
    path: '/organizations',
    page: lazyPage(() => import('./pages/organizations-page.tsx'), 'OrganizationsPage'),
  },
  {
    path: '/organizations/:id',
    page: lazyPage<{ params: { id: string } }>(
      () => import('./pages/organization-page.tsx'),
      'OrganizationPage',
    ),
  },
];

/**
 * Starts loading the code of the page at `pathname` (under /ui); resolves once it has loaded, or at once when
 * no page matches. Only an early start: the router still decides what renders, so a pattern this simple
 * match misreads costs a fallback, never a wrong page.
 */
export function preloadPageAt(pathname: string): Promise<void> {
  const path = pathname.replace(/^\/ui(?=\/|$)/, '') || '/';
  const route = PAGE_ROUTES.find((r) => new RegExp(`^${r.path.replace(/:[^/]+/g, '[^/]+')}/?$`).test(path));
  return route ? route.page.preload().catch(() => undefined) : Promise.resolve();
}
