import type { OwnerScope, ScopeHits } from '@assay/client/browser';
import { useSession } from '../session.tsx';

/** "your personal scope", or "organization ML Lab (ml-lab)": as the answer names the scope it looked in. */
export function scopeLabel(scope: OwnerScope): string {
  if (scope.id === 'personal') return 'your personal scope';
  const name = scope.name ?? scope.slug ?? scope.id;
  return `organization ${name}${scope.slug && scope.slug !== name ? ` (${scope.slug})` : ''}`;
}

/**
 * Which scope a list or search answered from: the header's scope switcher and the CLI's configured scope can
 * differ, and an answer that does not say where it looked misleads.
 */
export function ScopeNote({ scope, what }: { scope: OwnerScope; what: string }) {
  return (
    <p className="hint scope-note" data-scope={scope.id}>
      {what} in <strong>{scopeLabel(scope)}</strong>
    </p>
  );
}

/**
 * After an empty search: the other scopes that hold matches, each with a button that switches to it. Inline
 * (spans), as it sits in the empty state's paragraph.
 */
export function OtherScopesHint({ others }: { others: readonly ScopeHits[] }) {
  const { setScope } = useSession();
  if (others.length === 0) return null;
  return (
    <span className="other-scopes" role="group" aria-label="Matches in other scopes">
      {others.map((other) => (
        <span key={other.scope.id} className="other-scope" data-scope={other.scope.id}>
          {' '}
          {other.hits >= 1000 ? '1000 or more' : other.hits} {other.hits === 1 ? 'match' : 'matches'} in{' '}
          {scopeLabel(other.scope)}{' '}
          <button type="button" onClick={() => setScope(other.scope.id)}>
            Search{' '}
            {other.scope.id === 'personal' ? 'your personal scope' : (other.scope.name ?? other.scope.slug)}
          </button>
        </span>
      ))}
    </span>
  );
}
