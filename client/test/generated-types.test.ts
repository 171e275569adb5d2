import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { clientTypes, clientTypesPath, descriptionPath } from "../scripts/write-types";
import { acceptedAudioTypes, maxUploadBytes, stageNames } from "../src/index";

describe("the client's generated types", () => {
  it("are the ones generated from functions/openapi.json (run `npm run openapi` after changing a route or a schema)", async () => {
    expect(await readFile(clientTypesPath, "utf8")).toBe(await clientTypes());
  });

  it("give the client the description's accepted audio types, upload limit and stage names", async () => {
    const { components } = JSON.parse(await readFile(descriptionPath, "utf8"));
    expect(acceptedAudioTypes).toEqual(components.schemas.BlobRef.properties.mimeType.enum);
    expect(maxUploadBytes).toBe(components.schemas.BlobRef.properties.size.maximum);
    expect(stageNames).toEqual(Object.keys(components.schemas.ProcessingRequest.properties));
  });
});
