/** BBC audiowaveform JSON v2, 8 bits, 20 points per second, built by `waveform-data` from decoded samples (no Web Audio). */
import WaveformData from "waveform-data";
import type { Waveform } from "../records/stage-outputs";
import type { Pcm } from "./pcm";

export const pointsPerSecond = 20;

export function makeWaveform(pcm: Pcm): Promise<Waveform> {
  const channel = Float32Array.from(pcm.samples, (s) => s / 32768);
  // The slice of AudioBuffer that waveform-data reads.
  const audioBuffer = { numberOfChannels: 1, sampleRate: pcm.sampleRate, length: channel.length, getChannelData: () => channel };
  return new Promise((resolve, reject) => {
    WaveformData.createFromAudio(
      {
        // waveform-data's types name the DOM AudioBuffer; this project compiles without the DOM library.
        audio_buffer: audioBuffer as never,
        scale: Math.round(pcm.sampleRate / pointsPerSecond),
        bits: 8,
        disable_worker: true,
      },
      (error, waveform) => {
        if (error) return reject(error);
        resolve(waveform.toJSON() as Waveform);
      },
    );
  });
}
