/** The smallest environment that parses: the four required variables and a file blob store. */
export const requiredEnv = {
  DATABASE_URL: "pglite://memory",
  SVC_BLOB_DIR: "/tmp/blobs",
  SVC_PUBLIC_BASE_URL: "https://audio.example.com",
  SVC_PDS_HOST: "pds.example.com",
  SVC_PLAYBACK_SIGNING_KEY: "k".repeat(32),
};
