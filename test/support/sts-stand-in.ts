import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A loopback stand-in for STS `GetCallerIdentity` (query protocol, XML), all `sst build` asks of AWS before it
 * synthesizes, so the build runs with dummy credentials and no network.
 */
export const startStsStandIn = async (account = "123456789012") => {
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/xml" });
      res.end(
        `<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><GetCallerIdentityResult>` +
          `<Arn>arn:aws:iam::${account}:user/offline</Arn><UserId>OFFLINE</UserId><Account>${account}</Account>` +
          `</GetCallerIdentityResult><ResponseMetadata><RequestId>offline</RequestId></ResponseMetadata></GetCallerIdentityResponse>`,
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { endpoint: `http://127.0.0.1:${port}`, account, stop: () => new Promise<void>((resolve) => server.close(() => resolve())) };
};
