// Placement and the alias message every device gives; see Device.h.
#include "executor/core/Device.h"

#include <algorithm>

namespace shardcheck {

const BufferMap &Placement::map() {
  if (!map_)
    map_ = std::make_unique<BufferMap>(plan_, graph_, symbols_);
  return *map_;
}

const std::optional<LocalBox> &Placement::boxOf(const PlanBuffer &b, int64_t device) {
  auto key = std::make_pair(b.name, device);
  auto it = boxes_.find(key);
  if (it == boxes_.end())
    it = boxes_.emplace(key, bufferBoxOf(plan_, b, symbols_, device)).first;
  return it->second;
}

int64_t Placement::slotCount(const PlanBuffer &b, int64_t device) {
  if (const auto &box = boxOf(b, device))
    return box->slotCount();
  return static_cast<int64_t>(map().elements(b, device).size());
}

std::vector<double> Placement::slice(const PlanBuffer &b, int64_t device, const HostTensor &whole) {
  if (const auto &box = boxOf(b, device))
    return extractBox(whole, *box);
  const auto &elements = map().elements(b, device);
  std::vector<double> values(elements.size(), 0.0);
  for (size_t o = 0; o < elements.size(); ++o)
    if (elements[o] != kNoElement)
      values[o] = whole.data()[elements[o]];
  return values;
}

void Device::readWindow(const std::string &base, const std::string &slice, int64_t device,
                        const SliceWindow &w) {
  std::vector<double> whole = download(base, device);
  std::vector<double> window = download(slice, device);
  for (int64_t o = 0; o < w.outer; ++o)
    std::copy_n(whole.begin() + o * w.stride + w.offset, w.inner, window.begin() + o * w.inner);
  upload(slice, device, window);
}

void Device::writeWindow(const std::string &slice, const std::string &base, int64_t device,
                         const SliceWindow &w) {
  std::vector<double> whole = download(base, device);
  std::vector<double> window = download(slice, device);
  for (int64_t o = 0; o < w.outer; ++o)
    std::copy_n(window.begin() + o * w.inner, w.inner, whole.begin() + o * w.stride + w.offset);
  upload(base, device, whole);
}

std::string aliasCountError(const std::string &input, const std::string &output, int64_t device,
                            int64_t needed, int64_t have, const std::string &ofWhat) {
  return "alias " + input + " -> " + output + " on device " + std::to_string(device) + ": " +
         output + " needs " + std::to_string(needed) + " element(s)" + ofWhat + " but " + input +
         " holds " + std::to_string(have);
}

} // namespace shardcheck
