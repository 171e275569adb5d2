import WaveSurfer from "/vendor/wavesurfer.esm.js";
import { h } from "/dom.js";

/** Channel 0 of a BBC audiowaveform v2 object (min, max per pixel, channels interleaved), scaled to -1..1. */
const peaksOf = (waveform) => {
  const scale = waveform.bits === 8 ? 128 : 32768;
  const stride = 2 * waveform.channels;
  const peaks = [];
  for (let i = 0; i + 1 < waveform.data.length; i += stride) peaks.push(waveform.data[i] / scale, waveform.data[i + 1] / scale);
  return [Float32Array.from(peaks)];
};

/** The blob a playback URL names: its signature and expiry change every 15 minutes, its `url` only with the audio. */
const blobOf = (url) => new URL(url).searchParams.get("url");
/** When a signed playback URL stops playing (it lives 60 to 75 minutes). */
const expiresAtMs = (url) => Number(new URL(url).searchParams.get("exp")) * 1000;

/** Another source for the same <audio>, at the position it had once the new source knows its length. */
const swapSource = (audio, url) => {
  const at = audio.currentTime;
  audio.src = url;
  if (at > 0) audio.addEventListener("loadedmetadata", () => (audio.currentTime = at), { once: true });
};

/** Under a minute left, or none: bytes asked for with it may come too late. */
const expiring = (url) => expiresAtMs(url) - Date.now() < 60_000;

/**
 * A play or a seek on a URL about to expire swaps it at once for a fresh one, at the same position. Waiting for
 * `error` would take about 30 s: an expired URL answers 403, Chromium blocks that answer for a cross-origin <audio>
 * (ORB) as if the network had failed, and the element retries before it gives up.
 */
const renew = async (player) => {
  const { audio } = player;
  if (!player.reread || player.renewing || !expiring(audio.src)) return;
  player.renewing = true;
  const post = await player.reread().catch(() => null);
  player.renewing = false;
  // A URL no fresher (the page's clock far ahead of the service's) is left to the error path.
  if (!post?.embed?.url || expiring(post.embed.url)) return;
  const resume = !audio.paused;
  swapSource(audio, post.embed.url);
  if (resume) audio.play().catch(() => undefined);
};

/** How long a refused load waits before the next try: a per-minute limit (429) has passed after the last. */
const retryDelaysS = [5, 15, 45];

/**
 * A failed load re-reads the post. A page left open past its URL's hour gets a freshly signed URL and plays on. The
 * same URL (it changes every 15 minutes) was refused, most often by the per-IP playback limit: the load is tried again
 * after a backoff, a few times, then on the next Play, and the player says so.
 */
const recover = async (player) => {
  const { audio } = player;
  const failed = audio.src;
  if (!player.reread || player.recovering) return;
  player.recovering = true;
  const resume = player.wanted;
  const post = await player.reread().catch(() => null);
  player.recovering = false;
  if (post?.embed?.url && post.embed.url !== failed) {
    swapSource(audio, post.embed.url);
    if (resume) audio.play().catch(() => undefined);
    return;
  }
  const delay = retryDelaysS[player.retries++];
  if (delay === undefined) return (player.note.textContent = "The audio could not be loaded. Press play to try again.");
  player.note.textContent = `The audio could not be loaded. Trying again in ${delay} s.`;
  clearTimeout(player.retry);
  player.retry = setTimeout(() => loadAgain(player, resume), delay * 1000);
};

/** The same source loaded again, at the same position, playing if the listener asked to. */
const loadAgain = (player, resume) => {
  clearTimeout(player.retry);
  swapSource(player.audio, player.audio.src);
  if (resume) player.audio.play().catch(() => undefined);
};

/**
 * A post's player: the signed `embed.url` in an <audio>, the waveform drawn from `embed.waveform` (click to seek),
 * the transcript under it with the segment being spoken highlighted, and a captions track from `post.captions` (the
 * BFF's toWebVTT). `preload: "none"` for cards far down the feed, so a page load does not spend the playback limit.
 */
export const mountPlayer = (box, post, reread, { preload = "metadata" } = {}) => {
  const { embed } = post;
  const audio = h("audio", { controls: true, preload, src: embed.url });
  const play = h("button", { type: "button", class: "play", "aria-label": "Play" }, "▶");
  const note = h("span", { class: "note", role: "status" });
  // play() rejects when a new source interrupts it (renew, recover), which resume playing themselves. A source that
  // failed is loaded again first: an element in error plays nothing.
  play.addEventListener("click", () => {
    if (!audio.paused) return audio.pause();
    if (audio.error) return ((player.retries = 0), loadAgain(player, true));
    audio.play().catch(() => undefined);
  });
  audio.addEventListener("play", () => ((play.textContent = "❚❚"), play.setAttribute("aria-label", "Pause")));
  audio.addEventListener("pause", () => ((play.textContent = "▶"), play.setAttribute("aria-label", "Play")));
  const wave = h("div", { class: "waveform" });
  const transcript = h("p", { class: "transcript" });
  box.replaceChildren(h("div", { class: "row" }, play, h("span", { class: "duration" }, embed.durationMs ? `${(embed.durationMs / 1000).toFixed(1)} s` : ""), note), wave, audio, transcript);
  const player = { audio, wave, transcript, note, surfer: null, segments: [], reread, recovering: false, retries: 0, retry: null, renewing: false };
  audio.addEventListener("timeupdate", () => highlight(player));
  audio.addEventListener("play", () => renew(player));
  audio.addEventListener("seeking", () => renew(player));
  audio.addEventListener("error", () => recover(player));
  audio.addEventListener("loadedmetadata", () => ((player.retries = 0), (note.textContent = "")));
  // Whether the listener asked to play: a play that failed on an expired URL resumes on the fresh one.
  audio.addEventListener("play", () => (player.wanted = true));
  audio.addEventListener("pause", () => (player.wanted = audio.error !== null && player.wanted));
  audio.addEventListener("ended", () => (player.wanted = false));
  return updatePlayer(player, post);
};

export const updatePlayer = (player, post) => {
  const { audio } = player;
  const { embed } = post;
  // While paused: new audio (a stage changed the bytes), or the same audio's fresher URL once the one playing has
  // under ten minutes left. Otherwise the URL stays, and the browser's cached bytes with it.
  const ending = expiresAtMs(audio.src) - Date.now() < 10 * 60_000;
  if (audio.paused && embed.url !== audio.src && (blobOf(embed.url) !== blobOf(audio.src) || ending)) swapSource(audio, embed.url);
  if (embed.waveform && !player.surfer) {
    const duration = embed.durationMs ? embed.durationMs / 1000 : (embed.waveform.length * embed.waveform.samples_per_pixel) / embed.waveform.sample_rate;
    player.surfer = WaveSurfer.create({
      container: player.wave,
      media: audio,
      peaks: peaksOf(embed.waveform),
      duration,
      height: 64,
      waveColor: "#9aa7c7",
      progressColor: "#3b5bdb",
      cursorColor: "#1d2330",
      barWidth: 2,
      barGap: 1,
      normalize: true,
    });
  }
  if (embed.transcript?.segments && player.segments.length === 0) {
    player.segments = embed.transcript.segments.map((segment) => ({ ...segment, span: h("span", {}, segment.text) }));
    player.transcript.replaceChildren(...player.segments.flatMap((s) => [s.span, " "]));
    const captions = URL.createObjectURL(new Blob([post.captions ?? "WEBVTT\n"], { type: "text/vtt" }));
    const track = h("track", { kind: "captions", label: "Captions", srclang: embed.transcript.lang ?? "en", src: captions, default: true });
    audio.append(track);
    track.track.mode = "hidden"; // loads the cues; an <audio> shows none itself
  } else if (embed.transcript && !embed.transcript.segments && !player.transcript.textContent) {
    player.transcript.textContent = embed.transcript.text;
  }
  return player;
};

const highlight = (player) => {
  const ms = player.audio.currentTime * 1000;
  for (const segment of player.segments) segment.span.classList.toggle("speaking", segment.startMs <= ms && ms < segment.endMs);
};
