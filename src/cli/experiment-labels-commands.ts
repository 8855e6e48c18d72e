// `assay experiments tag` and `assay experiments delete`.
import { openClient } from './cli-client.ts';
import { UsageError } from './command-args.ts';
import { printJson } from './output.ts';
import type { JsonOptions } from './program/shared-options.ts';
import { Prompter } from './prompt.ts';

export interface TagOptions extends JsonOptions {
  remove?: string[];
}

export interface DeleteOptions {
  yes?: boolean;
}

/** Adds `tags` and drops --remove ones, keeping the others (the service replaces the whole list). */
export async function tag(id: string, tags: string[], values: TagOptions): Promise<number> {
  const remove = new Set(values.remove ?? []);
  if (tags.length === 0 && remove.size === 0) throw new UsageError('give tags to add, or --remove TAG');
  const { client } = openClient();
  const current = (await client.experiments.get(id)).tags;
  const next = [...new Set([...current, ...tags])].filter((t) => !remove.has(t));
  const experiment = await client.experiments.update(id, { tags: next });
  if (values.json) printJson(experiment);
  else process.stdout.write(`experiment ${experiment.id} tags: ${experiment.tags.join(', ') || '(none)'}\n`);
  return 0;
}

/**
 * Deletes a draft once confirmed: --yes, or "y" to the question (from the terminal, or the next line of a
 * script's stdin; no answer is a no).
 */
export async function remove(id: string, values: DeleteOptions): Promise<number> {
  const { client } = openClient();
  if (!values.yes) {
    const experiment = await client.experiments.get(id);
    const prompter = new Prompter();
    try {
      const answer = await prompter.line(
        `delete ${experiment.state} experiment "${experiment.name}" with its ${experiment.variations.length} variation(s)? [y/N] `,
      );
      if (!/^y(es)?$/i.test(answer)) {
        process.stderr.write('not deleted (--yes deletes without asking)\n');
        return 1;
      }
    } finally {
      prompter.close();
    }
  }
  await client.experiments.delete(id);
  process.stdout.write(`deleted experiment ${id}\n`);
  return 0;
}
