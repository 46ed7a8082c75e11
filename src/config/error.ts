/** A setting the service cannot start with; its message names the variable. */
export class ConfigError extends Error {}
