export interface ConfigProblem {
  variable: string;
  message: string;
}

/** Every fatal problem found, so an operator fixes them in one pass; `message` names each variable. */
export class ConfigError extends Error {
  constructor(readonly problems: ConfigProblem[]) {
    super(problems.map((p) => p.message).join("; "));
    this.name = "ConfigError";
  }
}
