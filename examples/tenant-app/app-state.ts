import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

/**
 * What the tenant app keeps of its own: the prompts its users posted, newest first. The service lists a viewer's
 * own posts and the replies in an author's threads, so a shared feed of everyone's prompts is the app's to compose
 * (the interface's design rule: no inbox endpoint). Kept in a JSON file when one is given, so a restart keeps the feed.
 */
export const appState = (file?: string) => {
  let prompts: string[] = [];
  if (file) {
    try {
      prompts = (JSON.parse(readFileSync(file, "utf8")) as { prompts: string[] }).prompts;
    } catch {
      // No state yet.
    }
  }
  return {
    prompts: () => prompts,
    addPrompt(postId: string) {
      prompts = [postId, ...prompts.filter((id) => id !== postId)];
      if (!file) return;
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, JSON.stringify({ prompts }));
    },
  };
};
