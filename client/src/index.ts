export { createClient, SvcClient } from "./client.js";
export type {
  AudioEmbedView,
  ClientOptions,
  CreatePostBody,
  CreateUploadBody,
  DirectUpload,
  Health,
  ListPostsQuery,
  ListRepliesQuery,
  PatchPostBody,
  PostView,
  ProcessingRequest,
  ProcessingState,
  Transcript,
  Waveform,
  WriteOptions,
} from "./client.js";
export type { components, operations, paths, webhooks } from "./generated/openapi.js";
export { stageSettleEventStageValues as stageNames } from "./generated/openapi.js";
export { PageList, type Page } from "./pages.js";
export type { GetAudioOptions } from "./play-audio.js";
export { SvcError, SvcNetworkError, type ErrorCode, type ValidationIssue } from "./svc-error.js";
export type { CallOptions } from "./transport.js";
export { acceptedAudioType, acceptedAudioTypes, maxUploadBytes, type AudioData, type AudioType, type BlobRef, type UploadAudioOptions, type UploadProgress } from "./upload-audio.js";
export { verifyWebhook, WebhookVerificationError, type StageSettleEvent, type VerifyWebhookOptions, type WebhookEvent, type WebhookHeaders } from "./verify-webhook.js";
export { toWebVTT, type TimedSegment, type TimedTranscript, type WebVTTOptions } from "./webvtt.js";
