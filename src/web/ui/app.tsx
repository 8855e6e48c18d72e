import { lazy, Suspense } from 'react';
import { Redirect, Route, Router, Switch } from 'wouter';
import { AppHeader } from './components/app-header.tsx';
import { Empty, Loading } from './components/status.tsx';
import { ComparePage } from './pages/compare-page.tsx';
import { ExperimentPage } from './pages/experiment-page.tsx';
import { ApiKeysPage } from './pages/api-keys-page.tsx';
import { AssetsPage } from './pages/assets-page.tsx';
import { ExperimentsPage } from './pages/experiments-page.tsx';
import { NewExperimentPage } from './pages/new-experiment-page.tsx';
import { OrganizationPage } from './pages/organization-page.tsx';
import { OrganizationsPage } from './pages/organizations-page.tsx';
import { RunPage } from './pages/run-page.tsx';
import { SearchPage } from './pages/search-page.tsx';
import { SignInPage } from './pages/sign-in-page.tsx';
import { useSession } from './session.tsx';

// The graph layout library is most of the lineage page's weight; only those who open the page load it.
const LineagePage = lazy(() => import('./pages/lineage-page.tsx').then((m) => ({ default: m.LineagePage })));
// The sweep page (its tables, plots and the parallel coordinates) loads when a sweep is first opened.
const SweepPage = lazy(() => import('./pages/sweep-page.tsx').then((m) => ({ default: m.SweepPage })));

/** The service serves the UI under /ui/ (the API owns the other paths), so every client route lives there. */
export function App() {
  const { client } = useSession();
  return (
    <Router base="/ui">
      {client ? (
        <>
          <AppHeader />
          <main id="main">
            <Switch>
              <Route path="/" component={ExperimentsPage} />
              <Route path="/experiments/new" component={NewExperimentPage} />
              <Route path="/experiments/:id" component={ExperimentPage} />
              <Route path="/experiments/:id/lineage">
                <Suspense fallback={<Loading what="the lineage" />}>
                  <LineagePage />
                </Suspense>
              </Route>
              <Route path="/experiments/:id/variations/:n/runs/:r" component={RunPage} />
              <Route path="/experiments/:id/sweeps/:sweepId">
                <Suspense fallback={<Loading what="the sweep" />}>
                  <SweepPage />
                </Suspense>
              </Route>
              <Route path="/experiments/:id/compare" component={ComparePage} />
              <Route path="/assets" component={AssetsPage} />
              <Route path="/search" component={SearchPage} />
              <Route path="/api-keys" component={ApiKeysPage} />
              <Route path="/organizations" component={OrganizationsPage} />
              <Route path="/organizations/:id" component={OrganizationPage} />
              <Route path="/sign-in">
                <Redirect to="/" replace />
              </Route>
              <Route>
                <Empty>
                  No page here. <a href="/ui/">Back to the experiments</a>.
                </Empty>
              </Route>
            </Switch>
          </main>
        </>
      ) : (
        <Switch>
          <Route path="/sign-in" component={SignInPage} />
          <Route>
            <Redirect to="/sign-in" replace />
          </Route>
        </Switch>
      )}
    </Router>
  );
}
