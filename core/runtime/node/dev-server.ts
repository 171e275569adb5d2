/**
 * `npm run dev`: the service with real audio processing on one machine. It starts the rendition service in this
 * process (RENDITION_PORT, sharing SVC_BLOB_DIR) and then `npm start` pointed at it: trim and waveform by the
 * rendition service, denoise by RNNoise, transcription by the stub (no speech model runs locally), inline. A variable
 * set in the environment wins over these defaults, as over local.env.
 */
import { parsedOrExit, stderrLog } from "../../config/check-config";
import { localEnvPath, processEnvironment } from "../../config/environment";
import { fillUnset, readEnvFile } from "../../config/load-env-file";
import { createLogger } from "../../observability/logger";
import { parseRenditionConfig } from "../../rendition/rendition-config";
import { startRendition } from "../../rendition/rendition-node-root";

const env = processEnvironment();
const local = readEnvFile(localEnvPath);
const config = parsedOrExit(() => parseRenditionConfig({ ...local, ...env }, stderrLog));
const logger = createLogger(config.logLevel);
const rendition = await startRendition(config, logger);
logger.info("rendition service listening", { url: rendition.url });

// These win over local.env (which runs the stubs), and lose to the environment.
fillUnset(env, {
  SVC_PROCESSING_STUB: "false",
  SVC_PROCESSING_INLINE: "true",
  SVC_RENDITION_SERVICE_URL: rendition.url,
  SVC_DENOISER: "rnnoise",
  SVC_TRANSCRIBER: "stub",
});

// The service itself, exactly as `npm start` runs it.
await import("./node-server");
