"""Source files the agents write through heredocs: one template per language, renamed per task.

Templates use @NAME@ placeholders rather than str.format because the code is full of braces. They are the
bulk of the generator's text, so they live alone; `CODE_LINES` gives other modules single lines to quote.
"""

from __future__ import annotations

import random

from .catalog import Task

_CODE = {
    "python": '''#!/usr/bin/env python3
"""Solution for @TASK@."""
import argparse
import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

DATA = Path("/app/data")
OUT = Path("/app/output.json")
PATTERN = re.compile(r"(?P<ip>\\d{1,3}(?:\\.\\d{1,3}){3}).*?(?P<date>\\d{4}-\\d{2}-\\d{2})")


def load_records(path: Path) -> list[dict]:
    records = []
    with path.open() as fh:
        for lineno, line in enumerate(fh, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            match = PATTERN.search(line)
            if match is None:
                continue
            records.append({"line": lineno, **match.groupdict()})
    return records


def summarize(records: list[dict]) -> dict:
    by_date = Counter(r["date"] for r in records)
    by_ip = defaultdict(list)
    for r in records:
        by_ip[r["ip"]].append(r["date"])
    return {
        "total": len(records),
        "dates": dict(sorted(by_date.items())),
        "last_seen": {ip: sorted(ds)[-1] for ip, ds in by_ip.items()},
    }


def @FN@(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("input", nargs="?", default=str(DATA / "input.log"))
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args(argv)
    records = load_records(Path(args.input))
    if not records:
        print("no records found", file=sys.stderr)
        return 1
    result = summarize(records)
    Path(args.out).write_text(json.dumps(result, indent=2))
    print(f"wrote {len(records)} records to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(@FN@())
''',
    "rust": """use std::collections::HashMap;

pub type Value = i32;
pub type Result = std::result::Result<(), Error>;

#[derive(Debug, PartialEq, Eq)]
pub enum Error {
    DivisionByZero,
    StackUnderflow,
    UnknownWord,
    InvalidWord,
}

#[derive(Default)]
pub struct @TYPE@ {
    stack: Vec<Value>,
    words: HashMap<String, Vec<String>>,
}

impl @TYPE@ {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn stack(&self) -> &[Value] {
        &self.stack
    }

    fn pop(&mut self) -> std::result::Result<Value, Error> {
        self.stack.pop().ok_or(Error::StackUnderflow)
    }

    pub fn eval(&mut self, input: &str) -> Result {
        let tokens: Vec<String> = input.split_whitespace().map(|t| t.to_lowercase()).collect();
        let mut i = 0;
        while i < tokens.len() {
            if tokens[i] == ":" {
                let end = tokens[i..].iter().position(|t| t == ";").ok_or(Error::InvalidWord)? + i;
                let name = tokens.get(i + 1).ok_or(Error::InvalidWord)?.clone();
                if name.parse::<Value>().is_ok() {
                    return Err(Error::InvalidWord);
                }
                let body = self.expand(&tokens[i + 2..end]);
                self.words.insert(name, body);
                i = end + 1;
                continue;
            }
            let expanded = self.expand(&tokens[i..=i]);
            for token in expanded {
                self.@FN@(&token)?;
            }
            i += 1;
        }
        Ok(())
    }

    fn expand(&self, tokens: &[String]) -> Vec<String> {
        tokens
            .iter()
            .flat_map(|t| self.words.get(t).cloned().unwrap_or_else(|| vec![t.clone()]))
            .collect()
    }

    fn @FN@(&mut self, token: &str) -> Result {
        if let Ok(n) = token.parse::<Value>() {
            self.stack.push(n);
            return Ok(());
        }
        match token {
            "+" | "-" | "*" | "/" => {
                let (b, a) = (self.pop()?, self.pop()?);
                let v = match token {
                    "+" => a + b,
                    "-" => a - b,
                    "*" => a * b,
                    _ if b == 0 => return Err(Error::DivisionByZero),
                    _ => a / b,
                };
                self.stack.push(v);
            }
            "dup" => {
                let a = *self.stack.last().ok_or(Error::StackUnderflow)?;
                self.stack.push(a);
            }
            "drop" => {
                self.pop()?;
            }
            "swap" => {
                let (b, a) = (self.pop()?, self.pop()?);
                self.stack.extend([b, a]);
            }
            "over" => {
                let (b, a) = (self.pop()?, self.pop()?);
                self.stack.extend([a, b, a]);
            }
            _ => return Err(Error::UnknownWord),
        }
        Ok(())
    }
}
""",
    "c": """#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LINE 4096
#define TABLE_SIZE 1024

typedef struct entry {
    char *key;
    long value;
    struct entry *next;
} entry_t;

static entry_t *table[TABLE_SIZE];

static uint32_t hash(const char *s) {
    uint32_t h = 2166136261u;
    while (*s) {
        h ^= (unsigned char)*s++;
        h *= 16777619u;
    }
    return h % TABLE_SIZE;
}

static entry_t *lookup(const char *key, int create) {
    uint32_t h = hash(key);
    for (entry_t *e = table[h]; e; e = e->next)
        if (strcmp(e->key, key) == 0)
            return e;
    if (!create)
        return NULL;
    entry_t *e = calloc(1, sizeof *e);
    e->key = strdup(key);
    e->next = table[h];
    table[h] = e;
    return e;
}

static int @FN@(FILE *in) {
    char line[MAX_LINE];
    int n = 0;
    while (fgets(line, sizeof line, in)) {
        char *sep = strchr(line, '=');
        if (!sep)
            continue;
        *sep = '\\0';
        entry_t *e = lookup(line, 1);
        e->value += strtol(sep + 1, NULL, 10);
        n++;
    }
    return n;
}

int main(int argc, char **argv) {
    FILE *in = argc > 1 ? fopen(argv[1], "r") : stdin;
    if (!in) {
        perror("@TASK@: fopen");
        return 1;
    }
    int n = @FN@(in);
    fprintf(stderr, "processed %d lines\\n", n);
    for (int i = 0; i < TABLE_SIZE; i++)
        for (entry_t *e = table[i]; e; e = e->next)
            printf("%s %ld\\n", e->key, e->value);
    return 0;
}
""",
    "javascript": """#!/usr/bin/env node
'use strict';
// Solution for @TASK@
const fs = require('fs');

const PT_LOAD = 1;

function readHeader(buf) {
  if (buf.readUInt32BE(0) !== 0x7f454c46) {
    throw new Error('not an ELF file');
  }
  const little = buf[5] === 1;
  const u16 = (o) => (little ? buf.readUInt16LE(o) : buf.readUInt16BE(o));
  const u32 = (o) => (little ? buf.readUInt32LE(o) : buf.readUInt32BE(o));
  return {
    little,
    u32,
    phoff: u32(28),
    phentsize: u16(42),
    phnum: u16(44),
  };
}

function @FN@(buf) {
  const h = readHeader(buf);
  const memory = {};
  for (let i = 0; i < h.phnum; i++) {
    const base = h.phoff + i * h.phentsize;
    if (h.u32(base) !== PT_LOAD) continue;
    const offset = h.u32(base + 4);
    const vaddr = h.u32(base + 8);
    const filesz = h.u32(base + 16);
    for (let j = 0; j + 4 <= filesz; j += 4) {
      memory[vaddr + j] = h.u32(offset + j);
    }
  }
  return memory;
}

function main() {
  const path = process.argv[2];
  if (!path) {
    console.error('usage: node @FILE@ <elf>');
    process.exit(2);
  }
  const memory = @FN@(fs.readFileSync(path));
  process.stdout.write(JSON.stringify(memory));
}

module.exports = { @FN@, readHeader };
if (require.main === module) main();
""",
    "go": """package bowling

import "errors"

var (
	ErrNegativeRollIsInvalid        = errors.New("negative roll is invalid")
	ErrPinCountExceedsPinsOnTheLane = errors.New("pin count exceeds pins on the lane")
	ErrPrematureScore               = errors.New("score cannot be taken until the end of the game")
	ErrCannotRollAfterGameOver      = errors.New("cannot roll after game is over")
)

const pinsPerFrame = 10
const framesPerGame = 10

// Game keeps the rolls of one game of bowling.
type Game struct {
	rolls []int
}

func NewGame() *Game {
	return &Game{}
}

func (g *Game) @FN@() (frame int, first bool, done bool) {
	i := 0
	for frame = 0; frame < framesPerGame; frame++ {
		if i >= len(g.rolls) {
			return frame, true, false
		}
		if g.rolls[i] == pinsPerFrame {
			i++
			continue
		}
		if i+1 >= len(g.rolls) {
			return frame, false, false
		}
		i += 2
	}
	return frame, true, true
}

func (g *Game) Roll(pins int) error {
	if pins < 0 {
		return ErrNegativeRollIsInvalid
	}
	if pins > pinsPerFrame {
		return ErrPinCountExceedsPinsOnTheLane
	}
	g.rolls = append(g.rolls, pins)
	return nil
}

func (g *Game) Score() (int, error) {
	score, i := 0, 0
	for frame := 0; frame < framesPerGame; frame++ {
		if i >= len(g.rolls) {
			return 0, ErrPrematureScore
		}
		switch {
		case g.rolls[i] == pinsPerFrame:
			score += pinsPerFrame + g.rolls[i+1] + g.rolls[i+2]
			i++
		case g.rolls[i]+g.rolls[i+1] == pinsPerFrame:
			score += pinsPerFrame + g.rolls[i+2]
			i += 2
		default:
			score += g.rolls[i] + g.rolls[i+1]
			i += 2
		}
	}
	return score, nil
}
""",
    "java": """import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Function;

class React {

    static class Cell<T> {
        protected T value;
        protected final List<ComputeCell<T>> dependents = new ArrayList<>();

        public T getValue() {
            return value;
        }
    }

    static class InputCell<T> extends Cell<T> {
        InputCell(T initial) {
            value = initial;
        }

        public void setValue(T newValue) {
            value = newValue;
            dependents.forEach(ComputeCell::@FN@);
        }
    }

    static class ComputeCell<T> extends Cell<T> {
        private final Function<List<T>, T> function;
        private final List<Cell<T>> inputs;
        private final List<Consumer<T>> callbacks = new ArrayList<>();

        ComputeCell(Function<List<T>, T> function, List<Cell<T>> inputs) {
            this.function = function;
            this.inputs = inputs;
            inputs.forEach(c -> c.dependents.add(this));
            value = compute();
        }

        private T compute() {
            List<T> values = new ArrayList<>();
            inputs.forEach(c -> values.add(c.getValue()));
            return function.apply(values);
        }

        void @FN@() {
            T next = compute();
            if (!next.equals(value)) {
                value = next;
                callbacks.forEach(cb -> cb.accept(next));
                dependents.forEach(ComputeCell::@FN@);
            }
        }

        public void addCallback(Consumer<T> callback) {
            callbacks.add(callback);
        }

        public void removeCallback(Consumer<T> callback) {
            callbacks.remove(callback);
        }
    }

    public static <T> InputCell<T> inputCell(T initialValue) {
        return new InputCell<>(initialValue);
    }

    public static <T> ComputeCell<T> computeCell(Function<List<T>, T> function, List<Cell<T>> cells) {
        return new ComputeCell<>(function, cells);
    }
}
""",
    "cpp": """#include "bank_account.h"

#include <mutex>
#include <stdexcept>

namespace Bankaccount {

void Bankaccount::open() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (open_) throw std::runtime_error("account already open");
    open_ = true;
    balance_ = 0;
}

void Bankaccount::close() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!open_) throw std::runtime_error("account not open");
    open_ = false;
}

void Bankaccount::deposit(int amount) {
    std::lock_guard<std::mutex> lock(mutex_);
    @FN@(amount);
    balance_ += amount;
}

void Bankaccount::withdraw(int amount) {
    std::lock_guard<std::mutex> lock(mutex_);
    @FN@(amount);
    if (amount > balance_) throw std::runtime_error("insufficient funds");
    balance_ -= amount;
}

int Bankaccount::balance() const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!open_) throw std::runtime_error("account not open");
    return balance_;
}

void Bankaccount::@FN@(int amount) const {
    if (!open_) throw std::runtime_error("account not open");
    if (amount < 0) throw std::runtime_error("negative amount");
}

}  // namespace Bankaccount
""",
    "sh": """#!/bin/bash
# @TASK@: setup and solution script
set -euo pipefail

WORKDIR=/app
LOG=/tmp/@FN@.log

log() {
    printf '[%s] %s\\n' "$(date +%H:%M:%S)" "$*" | tee -a "$LOG"
}

@FN@() {
    local target="$1"
    if [ ! -e "$target" ]; then
        log "missing $target"
        return 1
    fi
    log "processing $target"
    find "$target" -type f -name '*.txt' -print0 | while IFS= read -r -d '' f; do
        sed -e 's/\\x1b\\[[0-9;]*[A-Za-z]//g' "$f" > "$f.clean"
        mv "$f.clean" "$f"
    done
}

cd "$WORKDIR"
for dir in data output; do
    mkdir -p "$dir"
done
@FN@ "$WORKDIR/data" || log "nothing to do"
git -C "$WORKDIR" status --short 2>/dev/null || true
log "done"
""",
    "json": """{
  "name": "@TASK@",
  "version": "0.1.0",
  "entry": "@FILE@",
  "settings": {
    "max_workers": 4,
    "timeout_seconds": 120,
    "retries": 3,
    "log_level": "info"
  },
  "inputs": ["data/input.log", "data/extra.log"],
  "outputs": {"report": "output.json", "summary": "summary.csv"}
}
""",
}

_HELPER = {  # appended by verbose models, numbered so that the functions differ
    "python": '''

def check_case_@N@(record: dict, limit: int = @K@) -> bool:
    """Edge case @N@: reject records the checker would not accept."""
    date = record.get("date", "")
    if len(date) != 10 or date[4] != "-" or date[7] != "-":
        return False
    year, month, day = (int(part) for part in date.split("-"))
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return False
    return len(record.get("ip", "").split(".")) == 4 and record["line"] <= limit * 1000
''',
    "c": """
static long check_case_@N@(const entry_t *e, long limit) {
    /* edge case @N@: clamp values the reference implementation clamps */
    long v = e->value;
    if (v > limit * @K@)
        v = limit * @K@;
    if (v < -limit)
        v = -limit;
    return v;
}
""",
    "javascript": """
function checkCase@N@(memory, limit = @K@) {
  // edge case @N@: addresses must be word aligned and inside the loaded segments
  return Object.keys(memory)
    .map(Number)
    .filter((addr) => addr % 4 !== 0 || addr > limit * 0x100000);
}
""",
    "sh": """
check_case_@N@() {
    # edge case @N@: the verifier runs from a clean shell
    local out
    out=$(bash -lc "cd /app && ./solve.sh --dry-run" 2>&1 | tail -n @K@)
    grep -q "done" <<< "$out" || { log "case @N@ failed: $out"; return 1; }
}
""",
}
CODE_LINES = {
    lang: [line.strip() for line in code.splitlines() if len(line.strip()) > 12] for lang, code in _CODE.items()
}
FN_NAMES = (
    "solve",
    "process",
    "parse_input",
    "run_step",
    "apply_op",
    "evaluate",
    "handle",
    "update",
    "check",
    "normalize",
    "build_index",
    "resolve",
)


def source_file(lang: str, task: Task, rng: random.Random, path: str, helpers: int = 0) -> str:
    """A source file: the language template renamed for the task, plus `helpers` extra functions when it has them."""
    text = _CODE[lang] + "".join(_HELPER.get(lang, "").replace("@N@", str(n)) for n in range(1, helpers + 1))
    return (
        text.replace("@TASK@", task.name)
        .replace("@FILE@", path.rsplit("/", 1)[-1])
        .replace("@FN@", rng.choice(FN_NAMES))
        .replace("@TYPE@", "Forth" if lang == "rust" else "Solver")
        .replace("@K@", str(rng.randint(2, 64)))
    )
