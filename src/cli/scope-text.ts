// How the CLI names the scope an answer came from (the API's OwnerScope), on stderr: the CLI's default scope
// and the web UI's can differ, and a list or a search that does not say where it looked misleads.
import type { OwnerScope, ScopeHits } from '../client/index.ts';

/** `your personal scope`, or `organization "ml-lab"`. */
export function scopeName(scope: OwnerScope): string {
  return scope.id === 'personal' ? 'your personal scope' : `organization "${scope.slug ?? scope.id}"`;
}

/** The value of --organization that picks the scope. */
export function scopeOption(scope: OwnerScope): string {
  return `--organization ${scope.id === 'personal' ? 'personal' : (scope.slug ?? scope.id)}`;
}

/** `no matches in your personal scope; 3 in organization "ml-lab" (--organization ml-lab)`. */
export function emptySearchLine(scope: OwnerScope, others: readonly ScopeHits[]): string {
  const elsewhere = others.map(
    (o) => `${o.hits >= 1000 ? '1000 or more' : o.hits} in ${scopeName(o.scope)} (${scopeOption(o.scope)})`,
  );
  return [`no matches in ${scopeName(scope)}`, ...elsewhere].join('; ');
}
