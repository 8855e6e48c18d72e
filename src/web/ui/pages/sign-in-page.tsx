import { useState, type FormEvent } from 'react';
import { ErrorState } from '../components/status.tsx';
import { useSession } from '../session.tsx';

export function SignInPage() {
  const { signIn, signedOutReason } = useSession();
  const [credential, setCredential] = useState('');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await signIn(credential.trim());
    } catch (e) {
      setError(e);
      setBusy(false);
    }
  };

  return (
    <main id="main" className="sign-in">
      <h1>Sign in to Assay</h1>
      {signedOutReason && (
        <p className="notice" role="status">
          {signedOutReason}
        </p>
      )}
      <form onSubmit={(e) => void submit(e)}>
        <label htmlFor="credential">API key or access token</label>
        <input
          id="credential"
          type="password"
          autoComplete="off"
          spellCheck={false}
          value={credential}
          onChange={(e) => setCredential(e.target.value)}
          required
          aria-describedby="credential-hint"
        />
        <p id="credential-hint" className="hint">
          Paste an API key (<code>sk_user_…</code>) or your identity provider&apos;s access token. It is kept
          in this tab only and forgotten when you close it or sign out. On a fresh installation, the first
          admin&apos;s key is printed by <code>npx assay admin bootstrap-key</code> on the service&apos;s
          host; another user&apos;s key comes from <code>assay admin create-user</code>.
        </p>
        <button type="submit" disabled={busy || credential.trim() === ''}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      {error !== undefined && <ErrorState error={error} title="Sign-in failed" />}
    </main>
  );
}
