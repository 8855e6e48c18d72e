// What the command declarations share: the --json and --organization options, and how an action's answer
// becomes the exit code. Declarations stay light: an action loads its command's module only when it runs.
import { Option } from 'commander';

/** The `--json` form of every command that prints API objects. */
export function jsonOption(): Option {
  return new Option('--json', 'print the API objects as JSON, for scripts');
}

/** The option every scoped command takes. */
export function organizationOption(): Option {
  return new Option(
    '--organization <id|slug>',
    'the organization to act in, or "personal" (default: the configured one)',
  );
}

/** Options every command that prints API objects accepts. */
export interface JsonOptions {
  json?: boolean;
}

/**
 * An action from a handler answering the exit code; a negative answer (a server) leaves the process running.
 */
export function exitWith<A extends unknown[]>(
  handler: (...args: A) => Promise<number>,
): (...args: A) => Promise<void> {
  return async (...args) => {
    const code = await handler(...args);
    if (code >= 0) process.exitCode = code;
  };
}
