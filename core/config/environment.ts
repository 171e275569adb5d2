/**
 * The process's environment, read here and nowhere else (core/config/one-door.test.ts keeps it so): entry points take
 * it from here and hand it to the variable table's reader (read-variables.ts), through which every variable is read.
 */
import path from "node:path";
import { loadEnvFile } from "./load-env-file";

export const processEnvironment = (): NodeJS.ProcessEnv => process.env;

/** The committed development defaults (`npm start`, `npm run rendition`, `npm run dev`). */
export const localEnvPath = path.resolve(import.meta.dirname, "../../local.env");

/**
 * The process's environment with local.env under it: a variable already set wins over the file. With
 * NODE_ENV=production the file is not read at all, so a variable an operator forgot to set is missing (and the start
 * fails on it) rather than filled with a published development secret.
 */
export const localEnvironment = (env: NodeJS.ProcessEnv = process.env, file = localEnvPath): NodeJS.ProcessEnv =>
  // Trimmed as the variable table reads it: "production " is production there, so it must not load the file here.
  env.NODE_ENV?.trim() === "production" ? env : loadEnvFile(file, env);
