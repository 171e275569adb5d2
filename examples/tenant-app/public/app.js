import { h } from "/dom.js";
import { mountPlayer, updatePlayer } from "/player.js";

const $ = (id) => document.getElementById(id);
const postIdOf = (post) => post.uri.split("/").pop();
const reasons = {
  not_a_participant: "Only the prompt's author and whoever opened this branch can reply here.",
  unauthenticated: "Sign in to reply.",
};

/** Calls the BFF (never the service: the page holds no token). */
const api = async (path, init = {}) => {
  const res = await fetch(path, init);
  // A proxy's error page is no JSON: the status says what happened.
  const body = await res.json().catch(() => ({}));
  if (!res.ok) throw Object.assign(new Error(body.error?.message ?? `${res.status} ${res.statusText}`.trim()), { status: res.status, retryAfter: body.error?.retryAfter });
  return body;
};
const json = (method, body) => ({ method, headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
const say = (text) => ($("status").textContent = text);

/** Rendered posts by id, and the last settle heard for each (postId, stage): the latest `occurredAt` wins. */
const cards = new Map();
const heard = new Map();
let replyTo = null;
let audio = null;

// Sign-in: a demo cookie that the BFF maps to the acting actor.
const start = async () => {
  const session = await api("/api/session");
  $("sign-in").hidden = Boolean(session.name);
  $("signed-in").hidden = !session.name;
  $("app").hidden = !session.name;
  if (!session.name) return;
  $("me").textContent = session.name;
  listen();
  await loadFeed();
};
$("sign-in").addEventListener("submit", async (event) => {
  event.preventDefault();
  $("sign-in-status").textContent = "";
  try {
    await api("/api/session", json("POST", { name: $("name").value }));
  } catch (error) {
    $("sign-in-status").textContent = `Not signed in: ${error.message}.`;
    return;
  }
  await start();
});
$("sign-out").addEventListener("click", async () => {
  await api("/api/session", { method: "DELETE" });
  location.reload();
});

// Recording with MediaRecorder (or a picked file), previewed before posting.
let recorder = null;
let starting = false;
const showElapsed = (seconds) => {
  $("elapsed").textContent = `${seconds.toFixed(1)} s`;
  $("elapsed").dataset.seconds = seconds.toFixed(1);
};
$("record").addEventListener("click", async () => {
  if (recorder?.state === "recording") return recorder.stop();
  // A click while the microphone is being opened starts nothing more; the count starts again from zero.
  if (starting) return;
  starting = true;
  showElapsed(0);
  let stream;
  try {
    stream = await navigator.mediaDevices.getUserMedia({ audio: true });
  } catch (error) {
    // Permission denied, or no microphone: say so, and the button stays ready for another try.
    say(`No microphone: ${error.message}`);
    return;
  } finally {
    starting = false;
  }
  const chunks = [];
  recorder = new MediaRecorder(stream);
  recorder.addEventListener("dataavailable", (e) => e.data.size && chunks.push(e.data));
  const startedAt = performance.now();
  const tick = setInterval(() => showElapsed((performance.now() - startedAt) / 1000), 100);
  recorder.addEventListener("stop", () => {
    clearInterval(tick);
    for (const track of stream.getTracks()) track.stop();
    $("record").textContent = "● Record";
    $("record").classList.remove("recording");
    choose(new Blob(chunks, { type: recorder.mimeType }));
  });
  recorder.start(250);
  say("Recording…");
  $("record").textContent = "■ Stop";
  $("record").classList.add("recording");
});
$("file").addEventListener("change", () => $("file").files[0] && choose($("file").files[0]));

/**
 * The type to upload as. A picked file's type is the browser's guess from its extension: Chromium says video/webm
 * and video/mp4 for .webm and .mp4 files that hold only audio. The service reads the bytes anyway (and refuses
 * video), so those go as the audio types, without parameters.
 */
const pickedAsVideo = { "video/webm": "audio/webm", "video/mp4": "audio/mp4" };
const audioTypeOf = (blob) => pickedAsVideo[blob.type.split(";")[0]] ?? (blob.type || "application/octet-stream");

const choose = (blob) => {
  audio = blob;
  $("preview").src = URL.createObjectURL(blob);
  $("preview").hidden = false;
  $("post").disabled = false;
  say(`${(blob.size / 1024).toFixed(0)} KiB of ${audioTypeOf(blob)}`);
};

const startReply = (post) => {
  replyTo = post;
  $("replying").hidden = false;
  $("replying-to").textContent = post.authorId;
  $("post").textContent = "Post reply";
  $("composer").scrollIntoView({ behavior: "smooth" });
};
const endReply = () => {
  replyTo = null;
  $("replying").hidden = true;
  $("post").textContent = "Post prompt";
};
$("cancel-reply").addEventListener("click", endReply);

// Upload through the BFF, then post with every stage the service offers.
$("post").addEventListener("click", async () => {
  if (!audio) return;
  $("post").disabled = true;
  try {
    say("Uploading…");
    const { blob } = await api("/api/audio", { method: "POST", headers: { "content-type": audioTypeOf(audio) }, body: audio });
    say("Posting…");
    await api("/api/posts", json("POST", { text: $("text").value, audio: blob, replyTo: replyTo && postIdOf(replyTo) }));
  } catch (error) {
    say(`Not posted: ${error.message}`);
    $("post").disabled = false;
    return;
  }
  // Posted, whatever the feed's reload does next: it reports its own failure.
  $("text").value = "";
  $("preview").hidden = true;
  audio = null;
  endReply();
  say("Posted.");
  await loadFeed();
});

// The feed: prompts newest first, each thread's replies nested under the post they answer. A refused load (the
// viewer's reads for the minute spent) says so and tries again when the service says it may; one that failed on
// the way (a 5xx, the network) tries again in a few seconds.
let feedRetry;
const transientRetrySeconds = 3;
const loadFeed = async () => {
  clearTimeout(feedRetry);
  let threads;
  try {
    ({ threads } = await api("/api/feed"));
  } catch (error) {
    const transient = error.status === undefined || error.status >= 500;
    const retryAfter = error.retryAfter ?? (transient ? transientRetrySeconds : undefined);
    const wait = retryAfter ? ` Trying again in ${retryAfter} s.` : "";
    $("feed-status").textContent = `The feed could not be loaded: ${error.message}.${wait}`;
    if (retryAfter) feedRetry = setTimeout(loadFeed, retryAfter * 1000);
    return;
  }
  $("feed-status").textContent = "";
  cards.clear();
  shown = 0;
  $("feed").replaceChildren(
    ...threads.map(({ post, replies }) => {
      const children = (uri) => replies.filter((r) => r.record.reply.parent.uri === uri);
      const branch = (p) => {
        const below = children(p.uri);
        return h("div", { class: "thread" }, card(p), below.length ? h("div", { class: "replies" }, ...below.map(branch)) : null);
      };
      return branch(post);
    }),
  );
};

// Only the first few players load their audio's metadata with the page: each load is a playback read, and the
// service allows an address 60 a minute (SVC_LIMIT_PLAYBACK_PER_IP). The rest load on Play.
const preloaded = 3;
let shown = 0;

const card = (post) => {
  const id = postIdOf(post);
  const entry = { preload: shown++ < preloaded ? "metadata" : "none", stages: h("div", { class: "stages" }), player: null, playerBox: h("div", { class: "player" }), actions: h("div", { class: "row actions" }) };
  const meta = `${post.authorId} · ${new Date(post.record.createdAt).toLocaleTimeString()}${post.kind === "reply" ? " · reply" : ""}`;
  entry.el = h("article", { "data-post": id, "data-author": post.authorId }, h("div", { class: "meta" }, meta), post.record.text ? h("p", { class: "text" }, post.record.text) : null, entry.stages, entry.playerBox, entry.actions);
  cards.set(id, entry);
  render(entry, post);
  // A settle heard while the feed was read is newer than what it shows: read the post again.
  const behind = Object.entries(post.processing ?? {}).some(([stage, state]) => {
    const settle = heard.get(`${id}:${stage}`);
    return settle && (settle.status !== state.status || settle.occurredAt > state.updatedAt);
  });
  if (behind) refreshSoon(id);
  return entry.el;
};

const render = (entry, post) => {
  const id = postIdOf(post);
  entry.post = post;
  entry.stages.replaceChildren(
    ...Object.entries(post.processing ?? {}).map(([stage, state]) =>
      h("span", { class: "stage", "data-stage": stage, "data-status": state.status, "data-live": heard.get(`${id}:${stage}`)?.status === state.status, title: state.reason ?? "" }, `${stage}: ${state.status}`),
    ),
  );
  const reread = async () => (await api(`/api/posts/${id}`)).post;
  if (post.embed) entry.player = entry.player ? updatePlayer(entry.player, post) : mountPlayer(entry.playerBox, post, reread, { preload: entry.preload });
  const viewer = post.viewer;
  const reply = h("button", { type: "button", class: "reply", disabled: !viewer?.canReply, onclick: () => startReply(post) }, "Reply");
  const why = viewer && !viewer.canReply ? h("span", { class: "reply-reason", "data-reason": viewer.replyDisabledReason }, reasons[viewer.replyDisabledReason] ?? viewer.replyDisabledReason) : null;
  entry.actions.replaceChildren(reply, ...(why ? [why] : []));
};

/** One GET of a shown post a moment from now, however many settles arrive meanwhile (they come in bursts). */
const waiting = new Map();
const refreshSoon = (id) => {
  if (waiting.has(id)) return;
  waiting.set(id, setTimeout(async () => {
    waiting.delete(id);
    const entry = cards.get(id);
    if (entry) render(entry, (await api(`/api/posts/${id}`)).post);
  }, 150));
};

// Live stage status: the BFF relays the service's verified webhooks; the page reconciles from GET.
const pending = (post) => Object.values(post.processing ?? {}).some((state) => state.status === "pending");
const listen = () => {
  const events = new EventSource("/api/events");
  // A settle sent while no stream was open (a cut connection, a BFF restart, or before the first open) never
  // reaches the page, and the BFF keeps none: each open reads again the shown posts still pending.
  events.addEventListener("open", () => {
    for (const [id, entry] of cards) if (pending(entry.post)) refreshSoon(id);
  });
  // EventSource reconnects by itself after a cut, but gives up on an answer that is no stream (a proxy's 502 while
  // the BFF restarts): then a new one, a few seconds on.
  events.addEventListener("error", () => {
    if (events.readyState === EventSource.CLOSED) setTimeout(listen, transientRetrySeconds * 1000);
  });
  events.addEventListener("settle", (message) => {
    const settle = JSON.parse(message.data);
    const key = `${settle.postId}:${settle.stage}`;
    if ((heard.get(key)?.occurredAt ?? "") > settle.occurredAt) return;
    heard.set(key, settle);
    // A post not shown yet (the feed is being read) compares its stages with what was heard when it renders.
    if (cards.has(settle.postId)) refreshSoon(settle.postId);
  });
};

await start();
