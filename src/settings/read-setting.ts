import { ConfigError } from './config-error.ts';
import { flag, httpUrl, integer, seconds, text, type Env } from './env-values.ts';
import { SETTINGS, type SettingName } from './settings-schema.ts';

type Schema = typeof SETTINGS;

/** What a setting reads as: numbers for integers and seconds (as ms), booleans for flags, text otherwise. */
export type SettingValue<N extends SettingName> = Schema[N] extends { kind: 'integer' | 'seconds' }
  ? number
  : Schema[N] extends { kind: 'flag' }
    ? boolean
    : Schema[N] extends { default: string }
      ? string
      : string | undefined;

/** Tighter bounds than the schema's, where one setting constrains another (S3 part sizes). */
export interface Bounds {
  readonly min?: number;
  readonly max?: number;
}

/**
 * Reads one variable as the schema describes it: its type, default, allowed values and pattern. Throws a
 * ConfigError naming the variable.
 */
export function readSetting<N extends SettingName>(env: Env, name: N, bounds: Bounds = {}): SettingValue<N> {
  return read(env, name, bounds) as SettingValue<N>;
}

/** Whether the variable is set to something other than blanks. */
export const isSet = (env: Env, name: SettingName): boolean => text(env, name) !== undefined;

function read(env: Env, name: SettingName, bounds: Bounds): string | number | boolean | undefined {
  const setting = SETTINGS[name] as Schema[SettingName];
  switch (setting.kind) {
    case 'integer':
      return integer(
        env,
        name,
        setting.default,
        bounds.min ?? setting.min,
        bounds.max ?? ('max' in setting ? setting.max : undefined),
      );
    case 'seconds':
      return seconds(env, name, setting.default);
    case 'flag':
      return flag(env, name, setting.default);
    case 'url':
      return 'keepTrailingSlash' in setting ? httpUrl(env, name) : httpUrl(env, name)?.replace(/\/+$/, '');
    case 'text': {
      const value = text(env, name);
      if (value === undefined) return 'default' in setting ? setting.default : undefined;
      if ('choices' in setting && !(setting.choices as readonly string[]).includes(value))
        throw new ConfigError(
          `${name} must be one of ${setting.choices.join(', ')}, got ${JSON.stringify(value)}`,
        );
      if ('pattern' in setting && !setting.pattern.test(value)) {
        const expected = 'expected' in setting ? ` must be ${setting.expected}` : ' is not valid';
        // A credential inside the value (a password in DATABASE_URL) must not reach the logs.
        throw new ConfigError(
          `${name}${expected}${'secret' in setting ? '' : `, got ${JSON.stringify(value)}`}`,
        );
      }
      return value;
    }
  }
}
