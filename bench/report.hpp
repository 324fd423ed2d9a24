// Writes a benchmark program's section of docs/benchmarks.md: the text
// between "<!-- PROGRAM: begin -->" and "<!-- PROGRAM: end -->" is replaced
// (or appended when missing) and everything else is kept, so several
// programs and hand-written notes share one file.
#pragma once

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

inline bool write_report_section(const std::string& path, const std::string& program,
                                 const std::string& text) {
  const std::string begin = "<!-- " + program + ": begin -->\n";
  const std::string end = "<!-- " + program + ": end -->\n";
  std::stringstream ss;
  ss << std::ifstream(path).rdbuf();
  std::string doc = ss.str();
  const size_t b = doc.find(begin), e = doc.find(end);
  if (b != std::string::npos && e != std::string::npos && e > b)
    doc.replace(b, e + end.size() - b, begin + text + end);
  else
    doc += (doc.empty() ? "# Benchmarks\n\n" : "\n") + begin + text + end;
  std::ofstream out(path);
  out << doc;
  return static_cast<bool>(out);
}

// A program's last step: the errors it saw (if any) appended to its report,
// the report printed and written into its section of `path`. Returns the
// program's exit status (1 when the file could not be written).
inline int finish_report(std::ostringstream& md, const std::string& notes,
                         const std::string& path, const std::string& program) {
  if (!notes.empty())
    md << "\nErrors seen:\n" << notes;
  md << "\n";
  const std::string text = md.str();
  fputs(text.c_str(), stdout);
  return write_report_section(path, program, text) ? 0 : 1;
}
