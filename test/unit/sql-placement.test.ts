// SQL text lives only in repositories (`*-repository.ts`, one named function per statement) and in the
// database layer (drivers, migrations). This reads every string and template literal under src/ and fails on
// SQL anywhere else, including fragments a service would hand a repository (`failure_reason = $7`).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import ts from 'typescript';

const src = path.resolve(import.meta.dirname, '../../src');

/** Where SQL belongs, and the one other owner of SQL with the reason it is one. */
const allowed = [
  /-repository\.ts$/,
  /^server\/db\//,
  // The client's own local SQLite journal of resumable uploads: a store class over its private file.
  /^client\/uploads\/upload-store\.ts$/,
];

const SQL = [
  /\bSELECT\s+(\*|\d|[a-z_]+[.,(\s])/,
  /\bINSERT\s+(INTO|OR\s+IGNORE)\b/,
  /\bUPDATE\s+[a-z_]+(\s+[a-z])?\s+SET\b/,
  /\bDELETE\s+FROM\b/,
  /\bWITH\s+(RECURSIVE\s+)?[a-z_]+\s*(\(|AS\b)/,
  /\bON\s+CONFLICT\b/,
  // A positional parameter in an assignment or comparison, or a Postgres cast: a fragment of a statement.
  /[a-z_]\s*(=|<>|<|>)\s*\$\d+/,
  /\$\d+::[a-z]/,
];

function literals(file: string, text: string): { line: number; text: string }[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: { line: number; text: string }[] = [];
  const visit = (node: ts.Node) => {
    let value: string | undefined;
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) value = node.text;
    else if (ts.isTemplateExpression(node))
      value = [node.head.text, ...node.templateSpans.map((span) => span.literal.text)].join(' ${…} ');
    if (value !== undefined)
      found.push({ line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1, text: value });
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The SQL-looking literals of one file's text, as `file:line`. */
export function sqlOutsideRepositories(file: string, text: string): string[] {
  if (allowed.some((pattern) => pattern.test(file))) return [];
  return literals(file, text)
    .filter((literal) => SQL.some((pattern) => pattern.test(literal.text)))
    .map((literal) => `${file}:${literal.line}: ${literal.text.slice(0, 80)}`);
}

describe('SQL placement', () => {
  it('keeps SQL text in repositories and the database layer only', () => {
    const files = readdirSync(src, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    assert.ok(files.length > 50, 'the scan found the sources');
    const offenders = files.flatMap((file) =>
      sqlOutsideRepositories(file.split(path.sep).join('/'), readFileSync(path.join(src, file), 'utf8')),
    );
    assert.deepEqual(offenders, []);
  });

  it('recognises statements and the fragments a service might pass a repository', () => {
    const flagged = (code: string) => sqlOutsideRepositories('server/runs/run-service.ts', code).length > 0;
    assert.ok(flagged("db.query('SELECT id, name FROM experiments WHERE id = $1', [id])"));
    assert.ok(flagged('const sets = `ended_at = now(), failure_reason = $7, failure_message = $8`;'));
    assert.ok(flagged("const q = 'UPDATE runs r SET state = 1';"));
    assert.ok(flagged('const q = `WITH RECURSIVE walk(id) AS (${x})`;'));
    assert.ok(flagged("const guard = 'AND r.id = $5::uuid';"));
    assert.ok(
      !flagged("throw conflict('invalid_state_transition', `cannot ${verb} a run that is ${state}`);"),
    );
    assert.ok(!flagged("log.info('select a variation, then update it');"));
    assert.equal(
      sqlOutsideRepositories('server/runs/run-repository.ts', "q('SELECT 1 FROM runs')").length,
      0,
    );
  });
});
