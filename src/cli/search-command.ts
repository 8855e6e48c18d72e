// `assay search QUERY…`: full-text search over research documents and papers (websearch syntax).
import { openClient } from './cli-client.ts';
import { printJson, text } from './output.ts';
import { emptySearchLine, scopeName } from './scope-text.ts';
import type { JsonOptions } from './program/shared-options.ts';

export interface SearchOptions extends JsonOptions {
  kind?: string;
  limit?: number;
  organization?: string;
}

export async function searchCommand(words: string[], values: SearchOptions): Promise<number> {
  const { client, organizationId } = openClient(values.organization);
  const result = await client.search.query(words.join(' '), {
    kind: values.kind,
    limit: values.limit,
    organizationId,
  });
  // On stderr, so that stdout stays the results alone.
  if (result.items.length === 0)
    process.stderr.write(`${emptySearchLine(result.scope, result.other_scopes)}\n`);
  else process.stderr.write(`searched ${scopeName(result.scope)}\n`);
  if (values.json) {
    printJson(result);
    return 0;
  }
  // Matches in bold on a terminal; plain text when piped.
  const bold = process.stdout.isTTY
    ? (s: string) => s.replace(/<mark>/g, '\x1b[1m').replace(/<\/mark>/g, '\x1b[22m')
    : (s: string) => s.replace(/<\/?mark>/g, '');
  for (const hit of result.items) {
    process.stdout.write(
      `${hit.name}  [${hit.kind}]  asset ${hit.asset_id}  ${text(hit.created_at)}\n    ${bold(hit.snippet.replace(/\s+/g, ' '))}\n`,
    );
  }
  return 0;
}
