import { SCOPES } from '@assay/contract/enums';
import type { CreatedApiKey, Scope } from '@assay/client/browser';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { queryKeys } from '../query-keys.ts';
import { useClient } from '../session.tsx';
import { ErrorState } from './status.tsx';

const DEFAULT_SCOPES: readonly Scope[] = ['experiments:read', 'runs:read', 'assets:read', 'search:read'];
const EXPIRIES = [
  { days: 7, label: '7 days' },
  { days: 30, label: '30 days' },
  { days: 90, label: '90 days' },
  { days: 365, label: '1 year' },
] as const;

/**
 * Mints a key with the chosen scopes and expiry. Only the scopes the signed-in credential holds are offered,
 * since a minted key never exceeds its minter.
 */
export function MintKeyForm({ onMinted }: { onMinted(key: CreatedApiKey): void }) {
  const client = useClient();
  const queryClient = useQueryClient();
  const me = useQuery({ queryKey: queryKeys.me(), queryFn: () => client.me.get() });
  const held = new Set(me.data?.auth.scopes ?? []);
  const [description, setDescription] = useState('');
  const [scopes, setScopes] = useState<Set<Scope>>(() => new Set(DEFAULT_SCOPES));
  const [expiresInDays, setExpiresInDays] = useState('90');
  const mint = useMutation({
    mutationFn: () =>
      client.apiKeys.create({
        description,
        scopes: SCOPES.filter((s) => scopes.has(s)),
        expiresInDays: expiresInDays ? Number(expiresInDays) : undefined,
      }),
    // The answer holds the full key: drop it from the mutation cache as soon as this form is gone.
    gcTime: 0,
    onSuccess: (created) => {
      void queryClient.invalidateQueries({ queryKey: queryKeys.apiKeys() });
      setDescription('');
      onMinted(created);
      mint.reset();
    },
  });
  const toggle = (scope: Scope, on: boolean) =>
    setScopes((current) => {
      const next = new Set(current);
      if (on) next.add(scope);
      else next.delete(scope);
      return next;
    });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    mint.mutate();
  };
  return (
    <form className="stacked" onSubmit={submit} aria-labelledby="mint-title">
      <h2 id="mint-title">Mint a key</h2>
      <label>
        <span>Description</span>
        <input
          value={description}
          onChange={(e) => setDescription(e.target.value)}
          required
          maxLength={500}
        />
      </label>
      <fieldset className="scope-choices">
        <legend>Scopes</legend>
        {SCOPES.filter((s) => held.has(s)).map((s) => (
          <label key={s} className="inline">
            <input type="checkbox" checked={scopes.has(s)} onChange={(e) => toggle(s, e.target.checked)} />
            <code>{s}</code>
          </label>
        ))}
        {me.isPending && <span className="muted">Loading your scopes…</span>}
      </fieldset>
      <label>
        <span>Expires after</span>
        <select value={expiresInDays} onChange={(e) => setExpiresInDays(e.target.value)}>
          {EXPIRIES.map((e) => (
            <option key={e.days} value={e.days}>
              {e.label}
            </option>
          ))}
          <option value="">Never (or when the key you are signed in with expires)</option>
        </select>
      </label>
      <button type="submit" className="primary" disabled={mint.isPending || scopes.size === 0}>
        {mint.isPending ? 'Minting…' : 'Mint key'}
      </button>
      {mint.isError && <ErrorState error={mint.error} title="Could not mint the key" />}
    </form>
  );
}
