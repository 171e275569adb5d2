/**
 * `npm run dev`: the service with real audio processing on one machine. It starts the rendition service in this
 * process (RENDITION_PORT, default 3001, sharing SVC_BLOB_DIR) and then `npm start` pointed at it: trim and
 * waveform by the rendition service, denoise by RNNoise, transcription by the stub (no speech model runs locally),
 * inline. A variable set in the environment wins over these defaults, as over local.env.
 */
import path from "node:path";
import { loadEnvFile } from "../config/load-env-file";
import { createLogger } from "../observability/logger";
import { parseRenditionConfig } from "../rendition/rendition-config";
import { startRendition } from "../rendition/rendition-node-root";

const renditionPort = process.env.RENDITION_PORT?.trim() || "3001";
const devDefaults: Record<string, string> = {
  SVC_PROCESSING_STUB: "false",
  SVC_PROCESSING_INLINE: "true",
  SVC_RENDITION_SERVICE_URL: `http://127.0.0.1:${renditionPort}`,
  SVC_DENOISER: "rnnoise",
  SVC_TRANSCRIBER: "stub",
};
for (const [name, value] of Object.entries(devDefaults)) if (process.env[name] === undefined) process.env[name] = value;
loadEnvFile(path.resolve(import.meta.dirname, "../../local.env"));

const config = parseRenditionConfig(process.env, createLogger("info"));
const logger = createLogger(config.logLevel);
const rendition = await startRendition(config, logger, { port: Number(renditionPort) });
logger.info("rendition service listening", { url: rendition.url });

// The service itself, exactly as `npm start` runs it.
await import("./node-server");
