import { LaunchConfig } from '@assay/contract';
import { Compile } from 'typebox/compile';
import { badRequest } from '../http/errors.ts';

const check = Compile(LaunchConfig);
const KNOWN = Object.keys(LaunchConfig.properties).join(', ');

/**
 * Checks a variation's `launch:` block against the contract's LaunchConfig, so a bad block is refused when the
 * variation is created rather than when a run is provisioned. The error names the field (`launch.instance_type`)
 * as YAML errors do: 400 invalid_config, the field in `details.field`.
 */
export function assertLaunchConfig(launch: Record<string, unknown>, field: string): LaunchConfig {
  if (check.Check(launch)) return launch;
  const [first] = check.Errors(launch);
  const segments = (first?.instancePath ?? '').split('/').slice(1);
  const path = ['launch', ...segments.map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'))].join('.');
  let problem: string;
  if (first?.keyword === 'boolean' && segments.length === 1)
    problem = `is not a launch setting (known: ${KNOWN})`;
  else if (first?.keyword === 'boolean') problem = 'is not a valid environment variable name';
  else if (segments[0] === 'command' && segments.length === 1)
    problem = 'must be a non-blank command line or a non-empty list of words';
  else problem = first?.message ?? 'is not valid';
  throw badRequest('invalid_config', `${field}: ${path} ${problem}`, { field: path });
}
