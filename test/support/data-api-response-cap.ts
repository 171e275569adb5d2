import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { RDSDataClient } from "@aws-sdk/client-rds-data";
import { openRdsData } from "../../core/sql/rds-data";
import type { SqlBackend } from "../../core/sql/port";
import { startDataApiEmulator } from "./data-api-emulator";

/** The Data API's response cap, on the JSON the client receives (its values escaped again), and its refusal past it. */
export const dataApiResponseCap = 1024 * 1024;
const capMessage = "Database returned more than the allowed response size limit";

/**
 * The Data API adapter over the emulator (on PGlite) through a loopback proxy that refuses, as AWS does
 * (BadRequestException), any answer whose JSON passes 1 MiB: the emulator counts its rows' values, not the escaped
 * JSON that carries them. `sizes` holds every answer's size.
 */
export const openCappedDataApi = async (): Promise<SqlBackend & { sizes: number[] }> => {
  const emulator = await startDataApiEmulator();
  const upstream = new URL(emulator.endpoint);
  const sizes: number[] = [];
  const server: Server = createServer((req, res) => {
    const forward = httpRequest(
      { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on("data", (c: Buffer) => chunks.push(c));
        answer.on("end", () => {
          const body = Buffer.concat(chunks);
          sizes.push(body.length);
          if (body.length > dataApiResponseCap) {
            res.writeHead(400, { "content-type": "application/json", "x-amzn-errortype": "BadRequestException" });
            return res.end(JSON.stringify({ message: capMessage }));
          }
          res.writeHead(answer.statusCode ?? 200, answer.headers);
          res.end(body);
        });
      },
    );
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = new RDSDataClient({ endpoint, region: "us-east-1", credentials: { accessKeyId: "local", secretAccessKey: "local" } });
  const sql = openRdsData({ ...emulator, client, retry: { tries: 1 } });
  return {
    ...sql,
    sizes,
    async close() {
      client.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await emulator.stop();
    },
  };
};
