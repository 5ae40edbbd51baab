// Fixture of tools/check_function_length.py: Long is 81 lines, the others are short; braces
// in comments, strings and characters ({ "}" '{') and a constructor's initializer list do not
// confuse it.
#include <string>

namespace x {

struct Holder {
  Holder() : text_("{"), brace_('}') {}
  int Short() const { return 1; }  // { not a brace
  std::string text_;
  char brace_;
};

int Long(int v) {
  v += 0;  /* } */
  v += 1;  /* } */
  v += 2;  /* } */
  v += 3;  /* } */
  v += 4;  /* } */
  v += 5;  /* } */
  v += 6;  /* } */
  v += 7;  /* } */
  v += 8;  /* } */
  v += 9;  /* } */
  v += 10; /* } */
  v += 11; /* } */
  v += 12; /* } */
  v += 13; /* } */
  v += 14; /* } */
  v += 15; /* } */
  v += 16; /* } */
  v += 17; /* } */
  v += 18; /* } */
  v += 19; /* } */
  v += 20; /* } */
  v += 21; /* } */
  v += 22; /* } */
  v += 23; /* } */
  v += 24; /* } */
  v += 25; /* } */
  v += 26; /* } */
  v += 27; /* } */
  v += 28; /* } */
  v += 29; /* } */
  v += 30; /* } */
  v += 31; /* } */
  v += 32; /* } */
  v += 33; /* } */
  v += 34; /* } */
  v += 35; /* } */
  v += 36; /* } */
  v += 37; /* } */
  v += 38; /* } */
  v += 39; /* } */
  v += 40; /* } */
  v += 41; /* } */
  v += 42; /* } */
  v += 43; /* } */
  v += 44; /* } */
  v += 45; /* } */
  v += 46; /* } */
  v += 47; /* } */
  v += 48; /* } */
  v += 49; /* } */
  v += 50; /* } */
  v += 51; /* } */
  v += 52; /* } */
  v += 53; /* } */
  v += 54; /* } */
  v += 55; /* } */
  v += 56; /* } */
  v += 57; /* } */
  v += 58; /* } */
  v += 59; /* } */
  v += 60; /* } */
  v += 61; /* } */
  v += 62; /* } */
  v += 63; /* } */
  v += 64; /* } */
  v += 65; /* } */
  v += 66; /* } */
  v += 67; /* } */
  v += 68; /* } */
  v += 69; /* } */
  v += 70; /* } */
  v += 71; /* } */
  v += 72; /* } */
  v += 73; /* } */
  v += 74; /* } */
  v += 75; /* } */
  v += 76; /* } */
  v += 77; /* } */
  v += 78; /* } */
}

int AlsoShort(int v) {
  if (v > 0) {
    return v;
  }
  return -v;
}

}  // namespace x
