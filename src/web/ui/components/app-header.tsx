import { PERSONAL } from '@assay/client/browser';
import { useQuery } from '@tanstack/react-query';
import { Link } from 'wouter';
import { queryKeys } from '../query-keys.ts';
import { useClient, useSession } from '../session.tsx';

/** Who is signed in, which scope the pages act in (personal or an organization), and sign-out. */
export function AppHeader() {
  const client = useClient();
  const { scope, setScope, signOut } = useSession();
  const me = useQuery({ queryKey: queryKeys.me(), queryFn: () => client.me.get() });
  const scopes = useQuery({ queryKey: queryKeys.scopes(), queryFn: () => client.me.scopes() });
  const defaultId = scopes.data?.default_organization_id ?? PERSONAL;
  const mark = (id: string) => (id === defaultId ? ' (default)' : '');
  return (
    <header className="app-header">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <Link href="/" className="brand">
        Assay
      </Link>
      <nav aria-label="Main">
        <Link href="/">Experiments</Link>
        <Link href="/assets">Assets</Link>
        <Link href="/search">Search</Link>
        <Link href="/organizations">Organizations</Link>
        <Link href="/api-keys">API keys</Link>
      </nav>
      <div className="header-session">
        <label className="scope-switcher">
          <span>Scope</span>
          <select
            value={scope}
            onChange={(e) => setScope(e.target.value)}
            disabled={!scopes.data}
            aria-describedby="scope-hint"
          >
            <option value={PERSONAL}>Personal{mark(PERSONAL)}</option>
            {scopes.data?.organizations.map((o) => (
              <option key={o.id} value={o.id}>
                {o.name} ({o.slug}){mark(o.id)}
              </option>
            ))}
          </select>
        </label>
        <span id="scope-hint" className="visually-hidden">
          Experiments are listed and created in this scope
        </span>
        <span className="current-user" data-testid="current-user">
          {me.data ? (me.data.email ?? me.data.name ?? me.data.id) : '…'}
          {me.data?.is_admin && <span className="badge">admin</span>}
        </span>
        <button type="button" onClick={() => signOut()}>
          Sign out
        </button>
      </div>
    </header>
  );
}
