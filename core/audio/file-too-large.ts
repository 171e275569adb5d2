import { DomainError } from "../domain-error";

/** The one FILE_TOO_LARGE answer, whichever upload path (multipart, scan, presigned) finds the file too large. */
export const fileTooLarge = (maxBytes: number) => new DomainError("FILE_TOO_LARGE", `file too large: the limit is ${maxBytes} bytes`);
