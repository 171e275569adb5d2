/**
 * How a tenant backend calls `POST /api/v1/audio/upload`, for the description: the part's Content-Type is one of
 * the accepted types exactly, so a browser recording's `audio/webm;codecs=opus` is sent as `audio/webm`. The samples
 * call a local `npm start` (its address and local.env's demo token) as they stand; a test runs each one.
 */
import { acceptedMimeTypes } from "../records/accepted-types";

export const sampleServiceUrl = "http://127.0.0.1:3000";
export const sampleServiceToken = "dev-demo-token-0000000000000000000000000000";

export const uploadDescription = `The single part \`file\` must carry a Content-Type that is exactly one of ${acceptedMimeTypes.map((type) => `\`${type}\``).join(", ")}, with no parameters: a MediaRecorder reports \`audio/webm;codecs=opus\`, which is a 400 \`UNSUPPORTED_MEDIA_TYPE\`; send \`audio/webm\`. The bytes must be audio of that family; \`durationMs\` is measured from them.`;

export const uploadCodeSamples = [
  {
    lang: "Shell",
    label: "curl",
    source: `curl -sS -X POST ${sampleServiceUrl}/api/v1/audio/upload \\
  -H "Authorization: Bearer ${sampleServiceToken}" -H "X-Svc-Acting-Actor: alice" \\
  -F "file=@clip.webm;type=audio/webm"`,
  },
  {
    lang: "JavaScript",
    label: "Node (fetch)",
    source: `import { readFile } from "node:fs/promises";

const service = "${sampleServiceUrl}"; // the deployment's base URL
const token = "${sampleServiceToken}"; // your tenant's service token

// A browser recording's type is "audio/webm;codecs=opus": the part is sent with the bare type.
const form = new FormData();
form.append("file", new Blob([await readFile("clip.webm")], { type: "audio/webm" }), "clip.webm");
const response = await fetch(\`\${service}/api/v1/audio/upload\`, {
  method: "POST",
  headers: { authorization: \`Bearer \${token}\`, "x-svc-acting-actor": "alice" },
  body: form,
});
const { data } = await response.json(); // data.blob is the post's embed.audio
console.log(JSON.stringify(data));`,
  },
];
