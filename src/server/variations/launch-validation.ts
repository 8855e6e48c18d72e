import { LAUNCH_PROVIDERS, UntaggedLaunchConfig, type LaunchConfig } from '@assay/contract';
import type { TObject } from 'typebox';
import { Compile } from 'typebox/compile';
import { badRequest } from '../http/errors.ts';

/** Each member of the contract's LaunchConfig, compiled once, by its `provider` tag ('' untagged). */
const MEMBERS = new Map<string, { check: ReturnType<typeof Compile<TObject>>; known: string }>(
  [['', UntaggedLaunchConfig] as const, ...Object.entries(LAUNCH_PROVIDERS)].map(([tag, schema]) => [
    tag,
    { check: Compile(schema as TObject), known: Object.keys(schema.properties).join(', ') },
  ]),
);
const PROVIDERS = Object.keys(LAUNCH_PROVIDERS).join(', ');

/**
 * Checks a variation's `launch:` block against the member of the contract's LaunchConfig its `provider`
 * names (none: the untagged block), so a bad block is refused when the variation is created rather than when
 * a run is provisioned. The error names the field (`launch.instance_type`) as YAML errors do: 400
 * invalid_config, the field in `details.field`.
 */
export function assertLaunchConfig(launch: Record<string, unknown>, field: string): LaunchConfig {
  const tag = launch.provider;
  const member = MEMBERS.get(tag === undefined ? '' : typeof tag === 'string' ? tag : '?');
  if (!member || tag === '')
    throw badRequest('invalid_config', `${field}: launch.provider must be one of ${PROVIDERS}`, {
      field: 'launch.provider',
    });
  if (member.check.Check(launch)) return launch as LaunchConfig;
  const [first] = member.check.Errors(launch);
  const segments = (first?.instancePath ?? '').split('/').slice(1);
  const path = ['launch', ...segments.map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'))].join('.');
  let problem: string;
  if (first?.keyword === 'boolean' && segments.length === 1)
    problem = `is not a launch setting${tag ? ` of provider ${String(tag)}` : ''} (known: ${member.known})`;
  else if (first?.keyword === 'boolean') problem = 'is not a valid environment variable name';
  else if (segments[0] === 'command' && segments.length === 1)
    problem = 'must be a non-blank command line or a non-empty list of words';
  else problem = first?.message ?? 'is not valid';
  throw badRequest('invalid_config', `${field}: ${path} ${problem}`, { field: path });
}
