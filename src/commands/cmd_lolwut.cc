// LOLWUT [VERSION v] [args]: Redis' computer art. VERSION 5 draws Georg Nees'
// "Schotter" in Braille characters, VERSION 6 a city skyline in terminal
// colours, any other version (and no VERSION: kvrocks reports Redis 7.0) only
// the version line. The drawings follow Redis' lolwut5.c and lolwut6.c step
// by step, so that the same random numbers would give the same picture; the
// parts that draw no random numbers (Schotter's first two rows) are identical.
#include <cmath>
#include <random>

#include "commands/helpers.h"

namespace kvrocks {

namespace {

// Pixels with a small colour number each (0 = background for Schotter).
class Canvas {
 public:
  Canvas(int width, int height, char background)
      : width_(width), height_(height), pixels_(static_cast<size_t>(width) * height, background) {}

  int width() const { return width_; }
  int height() const { return height_; }

  void Set(int x, int y, int color) {
    if (x < 0 || x >= width_ || y < 0 || y >= height_) return;
    pixels_[x + static_cast<size_t>(y) * width_] = static_cast<char>(color);
  }
  int Get(int x, int y) const {
    if (x < 0 || x >= width_ || y < 0 || y >= height_) return 0;
    return pixels_[x + static_cast<size_t>(y) * width_];
  }

  // Bresenham, both ends included.
  void Line(int x1, int y1, int x2, int y2, int color) {
    int dx = std::abs(x2 - x1), dy = std::abs(y2 - y1);
    int sx = x1 < x2 ? 1 : -1, sy = y1 < y2 ? 1 : -1;
    int err = dx - dy;
    while (true) {
      Set(x1, y1, color);
      if (x1 == x2 && y1 == y2) break;
      int e2 = err * 2;
      if (e2 > -dy) {
        err -= dy;
        x1 += sx;
      }
      if (e2 < dx) {
        err += dx;
        y1 += sy;
      }
    }
  }

  // A square of side `size` centred on (x, y), turned by `angle` radians. The
  // arithmetic is Redis' lwDrawSquare to the type (float variables, double
  // constants and math functions), so that the corners round alike.
  void Square(int x, int y, float size, float angle, int color) {
    size = static_cast<float>(size / 1.4142135623);
    size = static_cast<float>(std::round(static_cast<double>(size)));
    int px[4], py[4];
    auto k = static_cast<float>(M_PI / 4 + angle);
    for (int j = 0; j < 4; j++) {
      px[j] = static_cast<int>(std::round(std::sin(static_cast<double>(k)) * size + x));
      py[j] = static_cast<int>(std::round(std::cos(static_cast<double>(k)) * size + y));
      k = static_cast<float>(k + M_PI / 2);
    }
    for (int j = 0; j < 4; j++) Line(px[j], py[j], px[(j + 1) % 4], py[(j + 1) % 4], color);
  }

 private:
  int width_, height_;
  std::vector<char> pixels_;
};

// rand() as Redis calls it: a non-negative int up to kRandMax.
constexpr int kRandMax = 2147483647;
int Rand() {
  thread_local std::mt19937 gen{std::random_device{}()};
  return static_cast<int>(gen() & 0x7fffffffu);
}

// Parses the optional integer arguments (after the VERSION pair); false if
// one is not an integer (the error is replied).
bool IntArgs(CommandCall& call, size_t first, std::vector<int64_t>* values) {
  for (size_t i = 0; i < values->size() && first + i < call.args.size(); i++) {
    int64_t v;
    if (!IntArg(call, first + i, &v)) return false;
    (*values)[i] = v;
  }
  return true;
}

int64_t Clamp(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

void ReplyArt(CommandCall& call, std::string text) {
  text += kRedisVersion;
  text += "\n";
  reply::Verbatim(call.out, text, call.resp);
}

// Braille characters: each covers 2x4 pixels.
std::string RenderBraille(const Canvas& c) {
  std::string text;
  for (int y = 0; y < c.height(); y += 4) {
    for (int x = 0; x < c.width(); x += 2) {
      int byte = 0;
      if (c.Get(x, y)) byte |= 1 << 0;
      if (c.Get(x, y + 1)) byte |= 1 << 1;
      if (c.Get(x, y + 2)) byte |= 1 << 2;
      if (c.Get(x + 1, y)) byte |= 1 << 3;
      if (c.Get(x + 1, y + 1)) byte |= 1 << 4;
      if (c.Get(x + 1, y + 2)) byte |= 1 << 5;
      if (c.Get(x, y + 3)) byte |= 1 << 6;
      if (c.Get(x + 1, y + 3)) byte |= 1 << 7;
      int code = 0x2800 + byte;  // UTF-8 in three bytes
      text.push_back(static_cast<char>(0xE0 | (code >> 12)));
      text.push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
      text.push_back(static_cast<char>(0x80 | (code & 0x3F)));
    }
    if (y != c.height() - 1) text.push_back('\n');
  }
  return text;
}

// Version 5: rows of squares, more disordered the lower they are.
void Schotter(CommandCall& call, size_t first) {
  std::vector<int64_t> v = {66, 8, 12};  // columns, squares per row, squares per column
  if (!IntArgs(call, first, &v)) return;
  const int cols = static_cast<int>(Clamp(v[0], 1, 1000));
  const int per_row = static_cast<int>(Clamp(v[1], 1, 200));
  const int per_col = static_cast<int>(Clamp(v[2], 1, 200));

  const int width = cols * 2;
  const int padding = width > 4 ? 2 : 0;
  const float side = static_cast<float>(width - padding * 2) / per_row;
  const int height = static_cast<int>(side * per_col + padding * 2);
  Canvas canvas(width, height, 0);
  for (int y = 0; y < per_col; y++) {
    for (int x = 0; x < per_row; x++) {
      int sx = static_cast<int>(x * side + side / 2 + padding);
      int sy = static_cast<int>(y * side + side / 2 + padding);
      float angle = 0;
      if (y > 1) {
        float r1 = static_cast<float>(Rand()) / static_cast<float>(kRandMax) / per_col * y;
        float r2 = static_cast<float>(Rand()) / static_cast<float>(kRandMax) / per_col * y;
        float r3 = static_cast<float>(Rand()) / static_cast<float>(kRandMax) / per_col * y;
        if (Rand() % 2) r1 = -r1;
        if (Rand() % 2) r2 = -r2;
        if (Rand() % 2) r3 = -r3;
        angle = r1;
        sx = static_cast<int>(sx + r2 * side / 3);
        sy = static_cast<int>(sy + r3 * side / 3);
      }
      canvas.Square(sx, sy, side, angle, 1);
    }
  }
  ReplyArt(call, RenderBraille(canvas) + "\nGeorg Nees - schotter, plotter on paper, 1968. Redis ver. ");
}

struct Skyscraper {
  int xoff, width, height;
  bool windows;
  int color;
};

void DrawSkyscraper(Canvas* canvas, const Skyscraper& s) {
  const int starty = canvas->height() - 1;
  const int endy = starty - s.height + 1;
  for (int y = starty; y >= endy; y--) {
    for (int x = s.xoff; x < s.xoff + s.width; x++) {
      if (y == endy && (x <= s.xoff + 1 || x >= s.xoff + s.width - 2)) continue;  // the roof is narrower
      int color = s.color;
      if (s.windows && x > s.xoff + 1 && x < s.xoff + s.width - 2 && y > endy + 1 && y < starty - 1) {
        // Windows two pixels wide and one tall (terminal cells are not square).
        int relx = x - (s.xoff + 1), rely = y - (endy + 1);
        if (relx / 2 % 2 && rely % 2) {
          do {
            color = 1 + Rand() % 2;
          } while (color == s.color);
          if (relx % 2) color = canvas->Get(x - 1, y);
        }
      }
      canvas->Set(x, y, color);
    }
  }
}

// Version 6: two rows of grey buildings behind a row of black ones with windows.
void Skyline(CommandCall& call, size_t first) {
  std::vector<int64_t> v = {80, 20};  // columns, rows
  if (!IntArgs(call, first, &v)) return;
  Canvas canvas(static_cast<int>(Clamp(v[0], 1, 1000)), static_cast<int>(Clamp(v[1], 1, 1000)), 3);
  const int h = canvas.height();
  Skyscraper s{};
  for (int color = 2; color >= 1; color--) {
    s.color = color;
    for (int offset = -10; offset < canvas.width();) {
      offset += Rand() % 8;
      s.xoff = offset;
      s.width = 10 + Rand() % 9;
      s.height = color == 2 ? h / 2 + Rand() % h / 2 : h / 2 + Rand() % h / 3;
      s.windows = false;
      DrawSkyscraper(&canvas, s);
      offset += color == 2 ? s.width / 2 : s.width + 1;
    }
  }
  s.color = 0;
  for (int offset = -10; offset < canvas.width();) {
    offset += Rand() % 8;
    s.xoff = offset;
    s.width = 5 + Rand() % 14;
    if (s.width % 4) s.width += s.width % 3;
    s.height = h / 3 + Rand() % h / 2;
    s.windows = true;
    DrawSkyscraper(&canvas, s);
    offset += s.width + 5;
  }

  static const char* const kColors[] = {"0;30;40m", "0;90;100m", "0;37;47m", "0;97;107m"};
  std::string text;
  for (int y = 0; y < h; y++) {
    for (int x = 0; x < canvas.width(); x++) {
      int color = canvas.Get(x, y);
      text += "\033[";
      text += kColors[color >= 0 && color <= 3 ? color : 0];
      text += " \033[0m";
    }
    if (y != h - 1) text.push_back('\n');
  }
  ReplyArt(call, text + "\nDedicated to the 8 bit game developers of past and present.\n"
                        "Original 8 bit image from Plaguemon by hikikomori. Redis ver. ");
}

void Lolwut(CommandCall& call) {
  const auto& a = call.args;
  if (a.size() >= 3 && TokenEquals(a[1], "version")) {
    int64_t v;
    if (!IntArg(call, 2, &v)) return;
    // Redis prints the version as an unsigned int and looks at its first digits.
    const auto version = static_cast<uint32_t>(v);
    if (version == 5) return Schotter(call, 3);
    if (version == 6) return Skyline(call, 3);
  }
  ReplyArt(call, "Redis ver. ");
}

}  // namespace

void RegisterLolwutCommands(CommandTable* t) {
  t->Add({"lolwut", -1, kCmdReadOnly | kCmdFast, 0, 0, 0, Lolwut, "server",
          "Display some computer art and the Redis version", "5.0.0"});
}

}  // namespace kvrocks
