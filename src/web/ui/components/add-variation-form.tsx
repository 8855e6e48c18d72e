import { APIError } from '@assay/client/browser';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useRef, useState, type FormEvent } from 'react';
import { queryKeys } from '../query-keys.ts';
import { useClient } from '../session.tsx';
import { ErrorState } from './status.tsx';

const EXAMPLE = 'lr: 0.001\nbatch_size: 32\nlaunch:\n  command: python train.py\n';

/** The line and column the server's YAML error names (its `details`), if it named one. */
function errorPosition(error: unknown): { line: number; column: number } | undefined {
  if (!(error instanceof APIError)) return undefined;
  const details = error.details as { line?: unknown; column?: unknown } | undefined;
  return typeof details?.line === 'number'
    ? { line: details.line, column: typeof details.column === 'number' ? details.column : 1 }
    : undefined;
}

/** Adds a variation from YAML to a draft; a YAML error is shown at its line and the caret moved there. */
export function AddVariationForm({ experimentId }: { experimentId: string }) {
  const client = useClient();
  const queryClient = useQueryClient();
  const [name, setName] = useState('');
  const [yaml, setYaml] = useState('');
  const editor = useRef<HTMLTextAreaElement>(null);
  const create = useMutation({
    mutationFn: () => client.variations.create(experimentId, { configYaml: yaml, name: name || undefined }),
    onSuccess: () => {
      setName('');
      setYaml('');
      void queryClient.invalidateQueries({ queryKey: queryKeys.experiment(experimentId) });
    },
    onError: (error) => {
      const at = errorPosition(error);
      const area = editor.current;
      if (!at || !area) return;
      const lines = yaml.split('\n');
      const start = lines.slice(0, at.line - 1).reduce((sum, l) => sum + l.length + 1, 0);
      area.focus();
      area.setSelectionRange(start, start + (lines[at.line - 1]?.length ?? 0));
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };
  const at = create.isError ? errorPosition(create.error) : undefined;
  return (
    <form className="card stacked" onSubmit={submit} aria-labelledby="add-variation-title">
      <h3 id="add-variation-title">Add a variation</h3>
      <label>
        <span>Name (optional)</span>
        <input value={name} onChange={(e) => setName(e.target.value)} />
      </label>
      <label>
        <span>Config YAML</span>
        <textarea
          ref={editor}
          className="code"
          rows={8}
          spellCheck={false}
          placeholder={EXAMPLE}
          value={yaml}
          onChange={(e) => setYaml(e.target.value)}
          aria-invalid={at ? true : undefined}
          aria-describedby="yaml-hint"
        />
      </label>
      <p id="yaml-hint" className="hint">
        Top-level <code>launch:</code> (the command a managed run executes) and <code>accelerate:</code>{' '}
        blocks are split out of the rest.
      </p>
      {create.isError && <ErrorState error={create.error} title="The variation was not added" />}
      {at && <YamlExcerpt yaml={yaml} line={at.line} column={at.column} />}
      <button type="submit" className="primary" disabled={create.isPending}>
        Add variation
      </button>
    </form>
  );
}

/** The lines around the error, the error's line marked and a caret under its column. */
function YamlExcerpt({ yaml, line, column }: { yaml: string; line: number; column: number }) {
  const lines = yaml.split('\n');
  const first = Math.max(1, line - 2);
  const shown = lines.slice(first - 1, line + 1);
  return (
    <pre className="code yaml-excerpt" aria-label={`YAML around line ${line}`}>
      {shown.map((text, i) => {
        const number = first + i;
        const isError = number === line;
        return (
          <span key={number} className={isError ? 'error-line' : undefined} data-line={number}>
            {String(number).padStart(3)} | {text}
            {'\n'}
            {isError && `    | ${' '.repeat(Math.max(0, column - 1))}^ line ${line}, column ${column}\n`}
          </span>
        );
      })}
    </pre>
  );
}
