// `assay search QUERY…`: full-text search over research documents and papers (websearch syntax).
import { openClient, ORGANIZATION_OPTION } from './cli-client.ts';
import { parseCommand, positiveInt, printUsage, wantsHelp } from './command-args.ts';
import { printJson, text } from './output.ts';

const USAGE = `usage: assay search QUERY… [--kind KIND] [--limit N] [--organization ID|SLUG|personal] [--json]

Words, "quoted phrases", -exclusions and "or", over the report, document and paper assets of one scope.
A server without search answers 503 (exit code 1).
`;

export async function searchCommand(args: string[]): Promise<number> {
  if (wantsHelp(args)) return printUsage(USAGE);
  const { values, positionals } = parseCommand(
    args,
    {
      ...ORGANIZATION_OPTION,
      json: { type: 'boolean' },
      kind: { type: 'string' },
      limit: { type: 'string' },
    },
    { min: 1, max: 100 },
  );
  const { client, organizationId } = openClient(values.organization);
  const result = await client.search.query(positionals.join(' '), {
    kind: values.kind,
    limit: positiveInt(values.limit, '--limit'),
    organizationId,
  });
  if (values.json) {
    printJson(result);
    return 0;
  }
  if (result.items.length === 0) process.stderr.write('no matches\n');
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
