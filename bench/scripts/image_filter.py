"""Image filter: a 3x3 box blur by shifted slices, then Sobel gradients and their magnitude,
on a 2,000 x 2,000 float32 image."""
TITLE = "image filter (2000x2000 f32)"
RTOL, ATOL = 1e-4, 1e-4


def make_data(rng):
    return {"image": rng.random((2000, 2000), dtype="float32")}


def run(xp, data):
    img = data["image"]
    blur = (img[:-2, :-2] + img[:-2, 1:-1] + img[:-2, 2:]
            + img[1:-1, :-2] + img[1:-1, 1:-1] + img[1:-1, 2:]
            + img[2:, :-2] + img[2:, 1:-1] + img[2:, 2:]) / 9.0
    gx = (blur[:-2, 2:] + 2 * blur[1:-1, 2:] + blur[2:, 2:]
          - blur[:-2, :-2] - 2 * blur[1:-1, :-2] - blur[2:, :-2])
    gy = (blur[2:, :-2] + 2 * blur[2:, 1:-1] + blur[2:, 2:]
          - blur[:-2, :-2] - 2 * blur[:-2, 1:-1] - blur[:-2, 2:])
    return xp.sqrt(gx * gx + gy * gy)
