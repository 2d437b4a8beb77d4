# Rewrites a flatc-generated header from namespace v4f::fb to v4f::fbtest.
file(READ ${IN} text)
string(REPLACE "namespace fb {" "namespace fbtest {" text "${text}")
string(REPLACE "v4f::fb::" "v4f::fbtest::" text "${text}")
string(REPLACE "_V4F_FB_H_" "_V4F_FBTEST_H_" text "${text}")
file(WRITE ${OUT} "${text}")
