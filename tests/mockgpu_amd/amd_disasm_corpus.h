// Compares our RDNA3 decoder and disassembler (mockgpu/amd/rdna3_decode.h) with llvm-objdump-19 on gfx1100 code
// objects: every instruction of each object's .text is decoded and printed by us and by objdump (`-d --mcpu=gfx1100`,
// many objects per objdump process), and the two texts must be equal instruction by instruction. Used by the op
// conformance harvest (tests/gpucodegen/conformance_gpu_harvest.cpp) and the fusion corpus test in this folder.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "compiler/gpu/amd_code_object.h"
#include "compiler/subprocess.h"
#include "mockgpu/amd/rdna3_decode.h"

namespace doorbell::amd_disasm_corpus {

struct CodeObject {
  std::string kernel;  // the kernel's name, for messages
  std::string bytes;   // the ELF code object (relocatable or linked)
};

struct Result {
  int objects = 0, kernels = 0;
  long instructions = 0;
  std::map<std::string, long> mnemonics;  // ours, both halves of a VOPD counted
  std::vector<std::string> differences;   // "kernel +0xOFF: objdump '...' ours '...'"
};

inline std::optional<std::string> find_objdump() {
  return find_executable({"llvm-objdump-19", "llvm-objdump"}, "/usr/lib/llvm-19/bin");
}

// objdump's instruction lines of one file: address -> text (the text before the "//" comment, trailing blanks cut).
using ObjdumpText = std::map<uint64_t, std::string>;

// Splits objdump's output by file ("<path>:\tfile format ...") into the instruction lines of each file's .text.
inline std::map<std::string, ObjdumpText> parse_objdump(const std::string& out) {
  std::map<std::string, ObjdumpText> files;
  ObjdumpText* cur = nullptr;
  bool in_text = false;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    if (const size_t f = line.find(":\tfile format "); f != std::string::npos) {
      cur = &files[line.substr(0, f)];
      in_text = false;
      continue;
    }
    if (line.rfind("Disassembly of section ", 0) == 0) {
      in_text = line == "Disassembly of section .text:";
      continue;
    }
    if (!cur || !in_text || line.empty() || line[0] != '\t') continue;
    const size_t c = line.find("//");
    if (c == std::string::npos) continue;
    std::string text = line.substr(1, c - 1);
    while (!text.empty() && text.back() == ' ') text.pop_back();
    (*cur)[std::stoull(line.substr(c + 2), nullptr, 16)] = text;
  }
  return files;
}

inline void add_mnemonics(const std::string& text, std::map<std::string, long>& hist) {
  hist[text.substr(0, text.find(' '))]++;
  if (const size_t y = text.find(" :: "); y != std::string::npos) hist[text.substr(y + 4, text.find(' ', y + 4) - y - 4)]++;
}

// The kernel (function symbol) an address of .text belongs to, for messages.
inline std::string owner(const AmdCodeObject& co, uint64_t addr, const std::string& fallback) {
  const ElfSymbol* best = nullptr;
  for (const ElfSymbol& s : co.symbols)
    if (s.type == 2 && s.value <= addr && (!best || s.value > best->value)) best = &s;
  return best ? best->name : fallback;
}

// Decodes and prints every instruction of each object's .text with our code and compares with objdump's text.
// `objdump`: the llvm-objdump path; `batch`: objects per objdump process.
inline Result check(const std::vector<CodeObject>& objects, const std::string& objdump, size_t batch = 128) {
  using mockgpu::amd::decode_rdna3;
  using mockgpu::amd::disassemble_rdna3;
  Result r;
  ScratchDir dir("doorbell-amd-disasm");
  for (size_t first = 0; first < objects.size(); first += batch) {
    const size_t last = std::min(objects.size(), first + batch);
    std::vector<std::string> argv{objdump, "-d", "--mcpu=gfx1100"};
    for (size_t i = first; i < last; ++i) {
      const std::filesystem::path p = dir.path() / ("k" + std::to_string(i) + ".o");
      std::ofstream(p, std::ios::binary).write(objects[i].bytes.data(), static_cast<std::streamsize>(objects[i].bytes.size()));
      argv.push_back(p.string());
    }
    const std::filesystem::path log = dir.path() / ("objdump" + std::to_string(first) + ".txt");
    const ProcessResult pr = run_process(argv, log);
    const std::string out = read_whole_file(log);
    if (!pr.ok()) {
      r.differences.push_back(command_line(argv).substr(0, 200) + " failed (" + pr.how() + "): " + out.substr(0, 500));
      return r;
    }
    std::map<std::string, ObjdumpText> texts = parse_objdump(out);
    for (size_t i = first; i < last; ++i) {
      const CodeObject& obj = objects[i];
      r.objects++;
      const AmdCodeObject co = read_amd_code_object(obj.bytes);
      r.kernels += static_cast<int>(co.kernels.size());
      const ElfSection* text = co.section(".text");
      const ObjdumpText& want = texts[argv[3 + (i - first)]];
      if (!text || want.empty()) {
        r.differences.push_back(obj.kernel + ": no .text in our reader or in objdump's output");
        continue;
      }
      if (text->offset + text->size > obj.bytes.size()) {
        r.differences.push_back(obj.kernel + ": .text runs past the end of the file");
        continue;
      }
      std::vector<uint32_t> words(text->size / 4);
      std::memcpy(words.data(), obj.bytes.data() + text->offset, words.size() * 4);
      size_t seen = 0;
      for (size_t at = 0; at < words.size();) {
        const uint64_t addr = text->addr + at * 4;
        std::string ours;
        size_t len = 1;
        try {
          const mockgpu::amd::Rdna3Inst inst = decode_rdna3(words.data() + at, words.size() - at);
          len = inst.words;
          ours = disassemble_rdna3(inst);
        } catch (const std::exception& e) {
          ours = std::string("error: ") + e.what();
        }
        auto w = want.find(addr);
        const std::string theirs = w == want.end() ? "<no instruction at this address>" : w->second;
        seen += w != want.end();
        r.instructions++;
        add_mnemonics(ours, r.mnemonics);
        if (ours != theirs) {
          std::ostringstream m;
          m << owner(co, addr, obj.kernel) << " +0x" << std::hex << addr << ": objdump '" << theirs << "' ours '"
            << ours << "'";
          r.differences.push_back(m.str());
        }
        at += len;
      }
      if (seen != want.size())
        r.differences.push_back(obj.kernel + ": objdump printed " + std::to_string(want.size()) +
                                " instructions, we matched " + std::to_string(seen) + " of them by address");
    }
  }
  return r;
}

// "count mnemonic" lines, most frequent first.
inline std::string histogram(const std::map<std::string, long>& hist) {
  std::vector<std::pair<long, std::string>> v;
  for (const auto& [m, n] : hist) v.push_back({-n, m});
  std::sort(v.begin(), v.end());
  std::string s;
  for (const auto& [n, m] : v) s += std::to_string(-n) + " " + m + "\n";
  return s;
}

}  // namespace doorbell::amd_disasm_corpus
