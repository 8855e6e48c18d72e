import { ApiClient, AuthenticationError, PERSONAL } from '@assay/client/browser';
import { MutationCache, QueryCache, QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { createContext, useCallback, useContext, useMemo, useState, type ReactNode } from 'react';

// sessionStorage only: the credential lives as long as the tab, is never put in a URL and never sent anywhere
// but the Authorization header of this origin's API calls.
const TOKEN_KEY = 'assay.credential';
const SCOPE_KEY = 'assay.scope';

export interface Session {
  /** The API client for the signed-in credential; null when signed out. */
  client: ApiClient | null;
  /** The organization id the pages list and create in, or PERSONAL. */
  scope: string;
  setScope(scope: string): void;
  /** Checks the credential against /v1/me, then keeps it; throws the client's error when it is refused. */
  signIn(credential: string): Promise<void>;
  /** Forgets the credential and every cached answer; `reason` is shown on the sign-in page. */
  signOut(reason?: string): void;
  /** Why the last session ended, when the server ended it (a 401) rather than the user. */
  signedOutReason: string | undefined;
  /**
   * A GET of this origin's API with the credential in the Authorization header, for an answer the client does
   * not read as JSON (a file to save); null when signed out.
   */
  fetchWithKey: ((path: string) => Promise<Response>) | null;
}

const SessionContext = createContext<Session | null>(null);

function clientFor(credential: string): ApiClient {
  return new ApiClient({ serverUrl: window.location.origin, apiKey: credential });
}

/** Forgets the credential, the scope and every cached answer; `reason` is what the sign-in page says. */
function endSession(
  queryClient: QueryClient,
  setCredential: (credential: string | null) => void,
  setSignedOutReason: (reason: string | undefined) => void,
  reason?: string,
): void {
  sessionStorage.removeItem(TOKEN_KEY);
  sessionStorage.removeItem(SCOPE_KEY);
  setCredential(null);
  setSignedOutReason(reason);
  queryClient.clear();
}

/** Holds the credential, the chosen scope and the query cache, and ends the session on any 401. */
export function SessionProvider({ children }: { children: ReactNode }) {
  const [credential, setCredential] = useState(() => sessionStorage.getItem(TOKEN_KEY));
  const [scope, setScopeState] = useState(() => sessionStorage.getItem(SCOPE_KEY) ?? PERSONAL);
  const [signedOutReason, setSignedOutReason] = useState<string>();
  const [queryClient] = useState(() => {
    const onError = (error: unknown) => {
      if (!(error instanceof AuthenticationError)) return;
      endSession(
        created,
        setCredential,
        setSignedOutReason,
        `The server ended the session: ${error.message}`,
      );
    };
    const created = new QueryClient({
      queryCache: new QueryCache({ onError }),
      mutationCache: new MutationCache({ onError }),
      defaultOptions: {
        // The client never retries (a repeated POST is the caller's decision); reads are not retried either,
        // so an error state shows at once with the server's code.
        queries: { retry: false, refetchOnWindowFocus: true },
      },
    });
    return created;
  });

  const signOut = useCallback(
    (reason?: string) => endSession(queryClient, setCredential, setSignedOutReason, reason),
    [queryClient],
  );

  const signIn = useCallback(
    async (value: string) => {
      const candidate = clientFor(value);
      const [, scopes] = await Promise.all([candidate.me.get(), candidate.me.scopes()]);
      const initial = scopes.default_organization_id ?? PERSONAL;
      sessionStorage.setItem(TOKEN_KEY, value);
      sessionStorage.setItem(SCOPE_KEY, initial);
      queryClient.clear();
      setScopeState(initial);
      setSignedOutReason(undefined);
      setCredential(value);
    },
    [queryClient],
  );

  const setScope = useCallback((next: string) => {
    sessionStorage.setItem(SCOPE_KEY, next);
    setScopeState(next);
  }, []);

  const client = useMemo(() => (credential ? clientFor(credential) : null), [credential]);
  const fetchWithKey = useMemo(
    () =>
      credential
        ? (path: string) =>
            fetch(`${window.location.origin}${path}`, { headers: { authorization: `Bearer ${credential}` } })
        : null,
    [credential],
  );
  const session = useMemo(
    () => ({ client, scope, setScope, signIn, signOut, signedOutReason, fetchWithKey }),
    [client, scope, setScope, signIn, signOut, signedOutReason, fetchWithKey],
  );
  return (
    <SessionContext.Provider value={session}>
      <QueryClientProvider client={queryClient}>{children}</QueryClientProvider>
    </SessionContext.Provider>
  );
}

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside SessionProvider');
  return session;
}

/** The client of a signed-in page (the app shell renders those pages only with a session). */
export function useClient(): ApiClient {
  const { client } = useSession();
  if (!client) throw new Error('useClient without a session');
  return client;
}
