# Every lesson runs under CTest; its key lines must appear in its output (literal text).
# Lessons 01-04 (foundation)
