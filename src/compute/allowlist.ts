// An operator's allowlist setting (EC2_ALLOWED_*, ASSAY_SLURM_ALLOWED_*): what a launch block may name.
import { ConfigError } from '../settings/config-error.ts';
import type { Env } from '../settings/env-values.ts';
import { readSetting } from '../settings/read-setting.ts';
import type { SettingName } from '../settings/settings-schema.ts';

/** Allowed values of one launch field; `any` only when the operator wrote `*`. */
export type Allowed = readonly string[] | 'any';

type AllowlistSetting = Extract<SettingName, `EC2_ALLOWED_${string}` | `ASSAY_SLURM_ALLOWED_${string}`>;

/** A comma-separated list plus the defaults, or `any` for `*` (refused where `anyAllowed` is false). */
export function readAllowlist(
  env: Env,
  name: AllowlistSetting,
  defaults: (string | undefined)[],
  anyAllowed = true,
): Allowed {
  const raw = readSetting(env, name);
  if (raw === '*' && anyAllowed) return 'any';
  const listed = (raw ?? '').split(',').map((v) => v.trim());
  if (raw !== undefined && listed.some((v) => v === '' || v === '*'))
    throw new ConfigError(
      anyAllowed
        ? `${name} must be \`*\` or a comma-separated list without empty items`
        : `${name} must be a comma-separated list without empty items (\`*\` is not allowed here)`,
    );
  const values = [...defaults, ...listed].filter((v): v is string => v !== undefined && v !== '');
  return Object.freeze([...new Set(values)]);
}
