/** Record and object type ids of the dev.svc.* lexicons (see lexicons/). */
export const nsids = {
  post: "dev.svc.audio.post",
  embedAudio: "dev.svc.embed.audio",
  transcript: "dev.svc.audio.transcript",
  profile: "dev.svc.actor.profile",
} as const;
