import { awsEnvironment } from "../../config/aws-environment";
import { ssmParameters, type SsmParameters } from "../../aws/ssm-parameters";

/** The value SST binds in place of a secret; the function fetches it from SSM. */
export const fetchFromSsm = "__FETCH_FROM_SSM__";
const binding = /^SST_(Secret|Parameter)_value_(.+)$/;

/**
 * Puts the SST Config values bound to this function into the variables the configuration table reads:
 * `SST_Parameter_value_X` as X, and `SST_Secret_value_X` fetched (decrypted) from SSM as X, the stage's own value
 * first and then the app's fallback, as `sst secrets set [--fallback]` stores them. A variable already set wins; a
 * secret set nowhere stays unset, so the configuration check names it if it is required.
 */
export const loadSstConfig = async (
  env: NodeJS.ProcessEnv,
  ssm: SsmParameters = ssmParameters(awsEnvironment(env)),
): Promise<void> => {
  const wanted: string[] = [];
  for (const [key, value] of Object.entries(env)) {
    const match = binding.exec(key);
    if (!match || value === undefined) continue;
    const [, kind, name] = match as unknown as [string, "Secret" | "Parameter", string];
    if (env[name] !== undefined) continue;
    if (kind === "Parameter" || value !== fetchFromSsm) env[name] = value;
    else wanted.push(name);
  }
  if (!wanted.length) return;
  const stagePath = (name: string) => `${env.SST_SSM_PREFIX ?? ""}Secret/${name}/value`;
  const fallbackPath = (name: string) => `/sst/${env.SST_APP}/.fallback/Secret/${name}/value`;
  const stage = await getParameters(ssm, wanted.map(stagePath));
  const missing = wanted.filter((name) => !stage.has(stagePath(name)));
  const fallback = missing.length ? await getParameters(ssm, missing.map(fallbackPath)) : new Map<string, string>();
  for (const name of wanted) {
    const value = stage.get(stagePath(name)) ?? fallback.get(fallbackPath(name));
    if (value !== undefined) env[name] = value;
  }
};

/** GetParameters takes at most 10 names per call. */
const getParameters = async (ssm: SsmParameters, names: string[]): Promise<Map<string, string>> => {
  const found = new Map<string, string>();
  for (let i = 0; i < names.length; i += 10) {
    for (const [name, value] of (await ssm.get(names.slice(i, i + 10))).found) found.set(name, value);
  }
  return found;
};
