/**
 * What the normalize stage reports (docs/decisions.md#loudness): ITU-R BS.1770 / EBU R128 figures of the bytes it
 * stored and of the bytes it started from. A figure a clip does not have (no gated loudness, digital silence, under
 * 3.5 s for the range) is null; zod's numbers are finite, so neither NaN nor an infinity passes.
 */
import * as z from "zod";

export const loudnessFiguresSchema = z.object({
  integratedLufs: z.number().nullable().meta({ description: "Integrated loudness, LUFS." }),
  truePeakDbtp: z.number().nullable().meta({ description: "True peak (4× oversampled), dBTP." }),
  rangeLu: z.number().nullable().meta({ description: "Loudness range, LU." }),
});

export const loudnessSchema = loudnessFiguresSchema
  .extend({ before: loudnessFiguresSchema.meta({ description: "The same figures of the bytes the stage started from." }) })
  .meta({
    id: "Loudness",
    description: "Loudness of the served bytes once `normalize` is ready (ITU-R BS.1770 / EBU R128); `null` where a clip has none.",
  });

export type LoudnessFigures = z.infer<typeof loudnessFiguresSchema>;
export type Loudness = z.infer<typeof loudnessSchema>;
