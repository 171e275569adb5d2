/** The duration meter for each accepted container family. */
import type { AudioFamily } from "../../records/accepted-types";
import type { AudioMeter } from "./audio-meter";
import { createMp3Meter } from "./mp3-duration";
import { createMp4Meter } from "./mp4-duration";
import { createOggMeter } from "./ogg-duration";
import { createWavMeter } from "./wav-duration";
import { createWebmMeter } from "./webm-duration";

const meters: Record<AudioFamily, () => AudioMeter> = {
  mp3: createMp3Meter,
  mp4: createMp4Meter,
  ogg: createOggMeter,
  wav: createWavMeter,
  webm: createWebmMeter,
};

/**
 * The walkers read hostile bytes: whatever one of them cannot make sense of (a read past a box it was told was
 * there) means the bytes are not the audio they claim to be, never a fault of the service.
 */
export function audioMeterFor(family: AudioFamily): AudioMeter {
  const meter = meters[family]();
  let broken: string | undefined;
  return {
    push(chunk) {
      if (broken !== undefined) return;
      try {
        meter.push(chunk);
      } catch (error) {
        broken = (error as Error).message;
      }
    },
    finish(totalBytes) {
      if (broken !== undefined) return { refused: `the ${family} structure is malformed (${broken})` };
      try {
        return meter.finish(totalBytes);
      } catch (error) {
        return { refused: `the ${family} structure is malformed (${(error as Error).message})` };
      }
    },
  };
}
