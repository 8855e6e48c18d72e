/**
 * A setting is missing or invalid; the message names the variable. Raised at start, before anything listens.
 */
export class ConfigError extends Error {
  override name = 'ConfigError';
}
