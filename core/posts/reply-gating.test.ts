import { describe, expect, it } from "vitest";
import { replyVerdict, type ThreadFacets } from "./reply-gating";

const prompt: ThreadFacets = { kind: "prompt", rootAuthorId: null, branchAuthorId: null };
const reply: ThreadFacets = { kind: "reply", rootAuthorId: "asker", branchAuthorId: "responder" };

describe("the reply verdict (reply gating)", () => {
  it.each([undefined, ""])("with no acting actor (%j) no one may reply, for the reason unauthenticated, on a prompt or a reply", (actor) => {
    expect(replyVerdict(prompt, actor)).toEqual({ canReply: false, reason: "unauthenticated" });
    expect(replyVerdict(reply, actor)).toEqual({ canReply: false, reason: "unauthenticated" });
  });

  it("replying to a prompt is open to any authenticated viewer", () => {
    expect(replyVerdict(prompt, "anyone")).toEqual({ canReply: true });
  });

  it("replying to a reply is open to the branch's two participants only; anyone else is not_a_participant", () => {
    expect(replyVerdict(reply, "asker")).toEqual({ canReply: true });
    expect(replyVerdict(reply, "responder")).toEqual({ canReply: true });
    expect(replyVerdict(reply, "outsider")).toEqual({ canReply: false, reason: "not_a_participant" });
  });
});
