import { Suspense } from 'react';
import { Redirect, Route, Router, Switch } from 'wouter';
import { AppHeader } from './components/app-header.tsx';
import { Empty, Loading } from './components/status.tsx';
import { SignInPage } from './pages/sign-in-page.tsx';
import { PAGE_ROUTES } from './routes.ts';
import { useSession } from './session.tsx';

/** The service serves the UI under /ui/ (the API owns the other paths), so every client route lives there. */
export function App() {
  const { client } = useSession();
  return (
    <Router base="/ui">
      {client ? (
        <>
          <AppHeader />
          <main id="main">
            <Suspense fallback={<Loading what="the page" />}>
              <Switch>
                {PAGE_ROUTES.map(({ path, page }) => (
                  <Route key={path} path={path} component={page} />
                ))}
                <Route path="/sign-in">
                  <Redirect to="/" replace />
                </Route>
                <Route>
                  <Empty>
                    No page here. <a href="/ui/">Back to the experiments</a>.
                  </Empty>
                </Route>
              </Switch>
            </Suspense>
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
