/**
 * Reads the structure of Postgres SQL text: what is code and what is inside a literal, a quoted identifier,
 * a comment or a dollar-quoted body. Migrations are split with it (the Data API takes one statement per call),
 * and the Data API adapter rewrites `$n` placeholders only where they are code.
 */
export type SqlSegment = { kind: "code" | "string" | "identifier" | "comment" | "dollar"; text: string };

const identChar = /[A-Za-z0-9_$\u0080-\uffff]/;
const dollarTag = /\$(?:[A-Za-z_\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*)?\$/y;

export const sqlSegments = (text: string): SqlSegment[] => {
  const segments: SqlSegment[] = [];
  let code = "";
  const push = (kind: SqlSegment["kind"], part: string) => {
    if (code) segments.push({ kind: "code", text: code });
    code = "";
    segments.push({ kind, text: part });
  };
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    const next = text[i + 1];
    const prev = i > 0 ? text[i - 1]! : "";
    if (c === "-" && next === "-") {
      const end = text.indexOf("\n", i);
      const stop = end === -1 ? text.length : end;
      push("comment", text.slice(i, stop));
      i = stop;
    } else if (c === "/" && next === "*") {
      const stop = blockCommentEnd(text, i);
      push("comment", text.slice(i, stop));
      i = stop;
    } else if (c === "'") {
      // E'...' takes backslash escapes; the E must be a prefix, not the end of an identifier.
      const escapes = /[eE]/.test(prev) && !identChar.test(text[i - 2] ?? "");
      const stop = quotedEnd(text, i, "'", escapes);
      push("string", text.slice(i, stop));
      i = stop;
    } else if (c === '"') {
      const stop = quotedEnd(text, i, '"', false);
      push("identifier", text.slice(i, stop));
      i = stop;
    } else if (c === "$" && !identChar.test(prev)) {
      dollarTag.lastIndex = i;
      const tag = dollarTag.exec(text)?.[0];
      if (tag) {
        const close = text.indexOf(tag, i + tag.length);
        const stop = close === -1 ? text.length : close + tag.length;
        push("dollar", text.slice(i, stop));
        i = stop;
      } else {
        code += c;
        i++;
      }
    } else {
      code += c;
      i++;
    }
  }
  if (code) segments.push({ kind: "code", text: code });
  return segments;
};

/** Statements of a SQL script, each trimmed and without its `;`; comment-only pieces are dropped. */
export const splitStatements = (text: string): string[] => {
  const statements: string[] = [];
  let current: SqlSegment[] = [];
  const flush = () => {
    if (current.some((s) => s.kind !== "comment" && s.text.trim() !== "")) {
      statements.push(current.map((s) => s.text).join("").trim());
    }
    current = [];
  };
  for (const segment of sqlSegments(text)) {
    if (segment.kind !== "code") {
      current.push(segment);
      continue;
    }
    const parts = segment.text.split(";");
    parts.forEach((part, n) => {
      if (n > 0) flush();
      if (part) current.push({ kind: "code", text: part });
    });
  }
  flush();
  return statements;
};

/** True when the text holds more than one statement (a `;` followed by more than whitespace and comments). */
export const hasMultipleStatements = (text: string): boolean => splitStatements(text).length > 1;

const blockCommentEnd = (text: string, start: number): number => {
  // Postgres block comments nest.
  let depth = 0;
  let i = start;
  while (i < text.length) {
    if (text[i] === "/" && text[i + 1] === "*") {
      depth++;
      i += 2;
    } else if (text[i] === "*" && text[i + 1] === "/") {
      depth--;
      i += 2;
      if (depth === 0) return i;
    } else i++;
  }
  return text.length;
};

const quotedEnd = (text: string, start: number, quote: string, backslashEscapes: boolean): number => {
  let i = start + 1;
  while (i < text.length) {
    const c = text[i];
    if (backslashEscapes && c === "\\") i += 2;
    else if (c === quote && text[i + 1] === quote) i += 2;
    else if (c === quote) return i + 1;
    else i++;
  }
  return text.length;
};
